// Breakdowns by session dimension and filtered stream metrics, computed on demand with the one
// breakdown SQL (warehouse/breakdowns.ts) over the served snapshot's session classes: the files of
// the customers in scope, nothing else. The work is admitted (a per-tenant limit, 429 beyond; a
// global one, 503 `busy` beyond), bounded in time from the request's arrival (the wait for a
// DuckDB slot included), and cancelled once every request waiting for it has gone. Answers are
// kept by the response cache (per snapshot, with their ETag), not here.
import fs from 'node:fs';
import type { Context } from 'koa';
import type { Db } from '../warehouse/duckdb/db.ts';
import { SlotsBusy } from '../warehouse/duckdb/slots.ts';
import { queryBreakdown, sessionClassesRelation, type BreakdownFilters, type BreakdownRow, type SessionDimension } from '../warehouse/breakdowns.ts';
import { snapshotFiles } from '../warehouse/snapshots.ts';
import type { WindowName } from '../warehouse/windows.ts';
import { problems } from './errors.ts';
import { Admission } from './admission.ts';
import { DeadlinePassed, requestSignal } from './request-signal.ts';
import { untilAborted } from './shared-work.ts';
import type { ServedSnapshot } from './snapshot-store.ts';

/** What a refused request is told to wait, in seconds. */
const RETRY_AFTER_SECONDS = 2;

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
}

interface Computation {
  result: Promise<BreakdownRow[]>;
  waiters: number;
  cancel: (reason: unknown) => void;
}

export class OnDemandBreakdowns {
  private readonly running = new Map<string, Computation>();
  private readonly admission: Admission;

  constructor(
    private readonly db: Db,
    private readonly timeoutMs: number,
    limits: { max: number; perTenant: number } = { max: 8, perTenant: 2 },
  ) {
    this.admission = new Admission(limits.max, limits.perTenant);
  }

  /** Computations under way (for tests). */
  get inProgress(): number {
    return this.running.size;
  }

  /** The breakdown's rows (sorted by totalSessions descending, then value), for the request `ctx`. */
  async rows(snap: ServedSnapshot, scope: BreakdownScope, q: BreakdownRequest, ctx: Context): Promise<BreakdownRow[]> {
    const key = [snap.id, scope.customers.join(','), scope.streamId ?? '', q.window, q.by ?? '', ...q.canonical].join('\0');
    const { signal, dispose } = requestSignal(ctx, this.timeoutMs);
    let c = this.running.get(key);
    try {
      if (!c) {
        c = this.start(key, snap, scope, q);
        this.running.set(key, c);
      }
      c.waiters++;
      return await untilAborted(c.result, signal);
    } catch (err) {
      if (err instanceof DeadlinePassed) throw problems.timeout();
      if (err instanceof SlotsBusy) throw problems.busy(RETRY_AFTER_SECONDS);
      throw err;
    } finally {
      dispose();
      if (c && --c.waiters === 0 && this.running.get(key) === c) c.cancel(signal.reason ?? new Error('no request waits any more'));
    }
  }

  private start(key: string, snap: ServedSnapshot, scope: BreakdownScope, q: BreakdownRequest): Computation {
    const files = sessionClassFiles(snap, scope.customers);
    const admitted = this.admission.admit(scope.admittedAs);
    if (!admitted.ok) {
      throw admitted.refusal.scope === 'tenant' ? problems.tooManyRequests('breakdowns', admitted.refusal.limit, RETRY_AFTER_SECONDS) : problems.busy(RETRY_AFTER_SECONDS);
    }
    const ac = new AbortController();
    const result =
      files.length === 0
        ? Promise.resolve([])
        : this.db.withSession((s) => queryBreakdown(s, sessionClassesRelation(files), { window: q.window, streamId: scope.streamId, by: q.by, filters: q.filters }), {
            signal: ac.signal,
            bounded: true,
          });
    const c: Computation = { result, waiters: 0, cancel: (reason) => ac.abort(reason) };
    result
      .catch(() => {})
      .finally(() => {
        admitted.release();
        if (this.running.get(key) === c) this.running.delete(key);
      });
    return c;
  }
}

/**
 * The session class files of `customers` in the snapshot (a customer without a partition has
 * none); 503 when the snapshot was published before breakdowns existed.
 */
function sessionClassFiles(snap: ServedSnapshot, customers: readonly string[]): string[] {
  if (!snap.hasBreakdowns) throw problems.breakdownsUnavailable();
  const files = snapshotFiles(snap.dir);
  return customers.filter((c) => snap.hasCustomer(c)).map(files.sessionClasses).filter((f) => fs.existsSync(f));
}
