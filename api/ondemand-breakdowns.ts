// Breakdowns by session dimension and filtered stream metrics, computed on demand with the one
// breakdown SQL (warehouse/breakdowns.ts) over the served snapshot's session classes: the files of
// the customers in scope, nothing else. The work is admitted (a per-tenant limit, 429 beyond; a
// global one, 503 `busy` beyond), bounded in time from the request's arrival (the wait for a
// DuckDB slot included), and cancelled once every request waiting for it has gone. Answers are
// kept by the response cache (per snapshot, with their ETag), not here.
import type { Context } from 'koa';
import type { Db } from '../warehouse/duckdb/db.ts';
import { queryBreakdown, sessionClassesRelation, type BreakdownFilters, type BreakdownRow, type SessionDimension } from '../warehouse/breakdowns.ts';
import type { WindowName } from '../warehouse/windows.ts';
import { problems } from './errors.ts';
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
 * The session class files of each of `customers` in the snapshot that has some (a customer
 * without a partition has none); 503 when the snapshot was published before breakdowns existed.
 */
function sessionClassFiles(snap: ServedSnapshot, customers: readonly string[]): (readonly string[])[] {
  if (!snap.hasBreakdowns) throw problems.breakdownsUnavailable();
  return customers.map((c) => snap.sessionClassFiles(c)).filter((files) => files.length > 0);
}
