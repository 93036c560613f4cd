// Breakdowns by session dimension and filtered stream metrics, computed on demand with the one
// breakdown SQL (warehouse/reads/breakdowns.ts) over the served snapshot's session classes: the files of
// the customers in scope, nothing else. The work is admitted (a per-tenant limit, 429 beyond; a
// global one, 503 `busy` beyond), bounded in time from the request's arrival (the wait for a
// DuckDB slot included), and cancelled once every request waiting for it has gone. Answers are
// kept by the response cache (per snapshot, with their ETag), not here.
import type { Context } from 'koa';
import type { Db } from '../warehouse/duckdb/index.ts';
import { NO_SESSIONS, queryBreakdown, sessionClassesRelation, type BreakdownFigures, type BreakdownFilters, type BreakdownRow, type SessionDimension } from '../warehouse/reads/index.ts';
import { queryBreakdownBatch, type BatchFigures, type BatchQuestion } from '../warehouse/reads/index.ts';
import type { WindowName } from '../warehouse/figures/index.ts';
import { problems } from './problems.ts';
import { AdmittedWork } from './shared-work.ts';
import type { ServedSnapshot } from './snapshot-store.ts';

/** Whose sessions a breakdown counts. */
export interface BreakdownScope {
  /** Customers whose session classes are read (a tenant's own, or every customer for an operator). */
  customers: readonly string[];
  /** One stream of theirs, or null: every stream of those customers. */
  streamId: string | null;
  /** Who the work is admitted for: the tenant's customer, or `operator`. */
  admittedAs: string;
}

export interface BreakdownRequest {
  window: WindowName;
  by: SessionDimension | null;
  filters: BreakdownFilters;
  /** The filters' canonical form (parseFilters): what makes two requests the same work. */
  canonical: readonly string[];
  /** Groups per stream too (a filtered stream list). */
  perStream?: boolean;
}

export class OnDemandBreakdowns {
  private readonly work: AdmittedWork<BreakdownRow[]>;

  constructor(
    private readonly db: Db,
    timeoutMs: number,
    limits: { max: number; perTenant: number } = { max: 8, perTenant: 2 },
  ) {
    this.work = new AdmittedWork('breakdowns', timeoutMs, limits);
  }

  /** Computations under way (for tests). */
  get inProgress(): number {
    return this.work.inProgress;
  }

  /** The breakdown's rows (sorted by totalSessions descending, then value), for the request `ctx`. */
  async rows(snap: ServedSnapshot, scope: BreakdownScope, q: BreakdownRequest, ctx: Context): Promise<BreakdownRow[]> {
    const key = [snap.id, scope.customers.join(','), scope.streamId ?? '', q.window, q.by ?? '', q.perStream === true ? 'per-stream' : '', ...q.canonical].join('\0');
    if (!snap.hasBreakdowns) throw problems.breakdownsUnavailable();
    return this.work.run(ctx, key, scope.admittedAs, (signal) => breakdownRows(this.db, snap, scope, q, signal));
  }
}

/**
 * The rows of a breakdown of the snapshot's session classes: what the breakdown route and filtered
 * metrics serve, and what alert rules watch (alerts/rule-figures.ts), computed by this one function.
 */
export async function breakdownRows(db: Db, snap: ServedSnapshot, scope: Pick<BreakdownScope, 'customers' | 'streamId'>, q: Omit<BreakdownRequest, 'canonical'>, signal?: AbortSignal): Promise<BreakdownRow[]> {
  // One relation per customer: queryBreakdown makes each one's parts alone.
  const relations = sessionClassFiles(snap, scope.customers).map(sessionClassesRelation);
  if (relations.length === 0) return [];
  return db.withSession((s) => queryBreakdown(s, relations, { window: q.window, streamId: scope.streamId, by: q.by, filters: q.filters, perStream: q.perStream === true }), {
    ...(signal ? { signal } : {}),
    bounded: true,
    // Several customers (an operator's platform-wide breakdown): big work.
    releaseAfter: relations.length > 1,
  });
}

/**
 * The one-group breakdown figures of many questions (alert rules): what breakdownRows gives each
 * alone (by: null), computed by one statement per group of up to `customersPerQuery` customers,
 * every window at once (breakdown-batch.ts), all in one session. In the questions' order; a
 * customer without session classes gets NO_SESSIONS, with no query.
 */
export async function breakdownBatch(db: Db, snap: ServedSnapshot, questions: readonly BatchQuestion[], customersPerQuery: number): Promise<BatchFigures[]> {
  if (!snap.hasBreakdowns) throw problems.breakdownsUnavailable();
  const asked = new Map<string, number[]>();
  for (const [i, q] of questions.entries()) asked.set(q.customerId, [...(asked.get(q.customerId) ?? []), i]);
  const customers = [...asked.keys()].filter((c) => snap.sessionClassFiles(c).length > 0);
  const results: BatchFigures[] = questions.map(() => NO_SESSIONS);
  const groups: string[][] = [];
  for (let at = 0; at < customers.length; at += customersPerQuery) groups.push(customers.slice(at, at + customersPerQuery));
  if (groups.length === 0) return results;
  await db.withSession(
    async (s) => {
      for (const group of groups) {
        const indexes = group.flatMap((c) => asked.get(c)!);
        const relation = sessionClassesRelation(group.flatMap((c) => snap.sessionClassFiles(c)));
        const figures = await queryBreakdownBatch(s, relation, indexes.map((i) => questions[i]!));
        for (const [j, i] of indexes.entries()) results[i] = figures[j]!;
      }
    },
    // Several customers: big work.
    { bounded: true, releaseAfter: customers.length > 1 },
  );
  return results;
}

/**
 * The session class files of each of `customers` in the snapshot that has some (a customer
 * without a partition has none); 503 when the snapshot was published before breakdowns existed.
 */
function sessionClassFiles(snap: ServedSnapshot, customers: readonly string[]): (readonly string[])[] {
  if (!snap.hasBreakdowns) throw problems.breakdownsUnavailable();
  return customers.map((c) => snap.sessionClassFiles(c)).filter((files) => files.length > 0);
}
