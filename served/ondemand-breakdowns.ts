// Breakdowns by session dimension and filtered stream metrics, computed on demand with the one
// breakdown SQL (warehouse/reads/breakdowns.ts) over the served snapshot's session classes: the files of
// the customers in scope, nothing else; for the short windows (5m, 15m), over the recent reports'
// own session classes, made when first asked and kept for the snapshot (short-window-classes.ts). The work is admitted (a per-tenant limit, 429 beyond; a
// global one, 503 `busy` beyond), bounded in time from the request's arrival (the wait for a
// DuckDB slot included), and cancelled once every request waiting for it has gone. Answers are
// kept by the response cache (per snapshot, with their ETag), not here.
import type { Context } from 'koa';
import type { Db } from '../warehouse/duckdb/index.ts';
import { NO_SESSIONS, queryBreakdown, sessionClassesRelation, type BreakdownFigures, type BreakdownFilters, type BreakdownRow, type SessionDimension } from '../warehouse/reads/index.ts';
import { queryBreakdownBatch, type BatchFigures, type BatchQuestion } from '../warehouse/reads/index.ts';
import { isShortWindow, type ServedWindow } from '../warehouse/figures/index.ts';
import { shortClassOf, shortWindowClass } from '../warehouse/reads/index.ts';
import { shortWindowClasses } from './short-window-classes.ts';
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
  /** A snapshot's window, or a short one (computed from the recent reports: short-window-classes.ts). */
  window: ServedWindow;
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
  if (isShortWindow(q.window)) {
    const maxClass = shortWindowClass(q.window);
    // Short windows' classes are small (15 minutes of reports): a plain session, where their tables are.
    const scopes = scope.customers.map((customerId) => ({ customerId, streamId: scope.streamId }));
    return shortWindowClasses(db).using(snap, scopes, (tables) =>
      tables.length === 0
        ? Promise.resolve([])
        : db.withSession((s) => queryBreakdown(s, tables, { window: q.window, maxClass, streamId: scope.streamId, by: q.by, filters: q.filters, perStream: q.perStream === true }), {
            ...(signal ? { signal } : {}),
            bounded: true,
          }),
    );
  }
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
  const results: BatchFigures[] = questions.map(() => NO_SESSIONS);
  const short = [...questions.keys()].filter((i) => isShortWindow(questions[i]!.window));
  if (short.length > 0) {
    const figures = await shortBreakdownBatch(db, snap, short.map((i) => questions[i]!), customersPerQuery);
    for (const [j, i] of short.entries()) results[i] = figures[j]!;
    if (short.length === questions.length) return results;
  }
  const asked = new Map<string, number[]>();
  for (const [i, q] of questions.entries()) if (!isShortWindow(q.window)) asked.set(q.customerId, [...(asked.get(q.customerId) ?? []), i]);
  const customers = [...asked.keys()].filter((c) => snap.sessionClassFiles(c).length > 0);
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
 * breakdownBatch's questions of short windows (5m, 15m): each customer's short window classes (of
 * its one stream asked, or of all its streams), made once for the snapshot, then one statement per
 * group of `customersPerQuery` customers over theirs, both windows at once.
 */
async function shortBreakdownBatch(db: Db, snap: ServedSnapshot, questions: readonly BatchQuestion[], customersPerQuery: number): Promise<BatchFigures[]> {
  const asked = new Map<string, number[]>();
  for (const [i, q] of questions.entries()) asked.set(q.customerId, [...(asked.get(q.customerId) ?? []), i]);
  const results: BatchFigures[] = questions.map(() => NO_SESSIONS);
  const customers = [...asked.keys()];
  for (let at = 0; at < customers.length; at += customersPerQuery) {
    const group = customers.slice(at, at + customersPerQuery);
    const scopes = group.map((customerId) => {
      // One stream asked of a customer: its reports only; otherwise every stream's of the customer.
      const streams = new Set(asked.get(customerId)!.map((i) => questions[i]!.streamId));
      const [only] = streams;
      return { customerId, streamId: streams.size === 1 && typeof only === 'string' ? only : null };
    });
    const indexes = group.flatMap((c) => asked.get(c)!);
    const figures = await shortWindowClasses(db).using(snap, scopes, (tables) =>
      tables.length === 0
        ? Promise.resolve(indexes.map(() => NO_SESSIONS))
        : db.withSession((s) => queryBreakdownBatch(s, unionOf(tables), indexes.map((i) => questions[i]!), shortClassOf), { bounded: true }),
    );
    for (const [j, i] of indexes.entries()) results[i] = figures[j]!;
  }
  return results;
}

/** One relation of several tables of the same columns. */
function unionOf(tables: readonly string[]): string {
  return tables.length === 1 ? tables[0]! : `(${tables.map((t) => `SELECT * FROM ${t}`).join(' UNION ALL ')})`;
}

/**
 * The session class files of each of `customers` in the snapshot that has some (a customer
 * without a partition has none); 503 when the snapshot was published before breakdowns existed.
 */
function sessionClassFiles(snap: ServedSnapshot, customers: readonly string[]): (readonly string[])[] {
  if (!snap.hasBreakdowns) throw problems.breakdownsUnavailable();
  return customers.map((c) => snap.sessionClassFiles(c)).filter((files) => files.length > 0);
}
