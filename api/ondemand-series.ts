// Series of bucket sizes that no rollup precomputed (any size from 60 to 86400 s): computed with
// the shared series SQL (series_combine.sql over report_pieces.sql, warehouse/bucket-series.ts)
// over the stream's raw files and cached per snapshot. The work is admitted (a per-tenant limit,
// 429 beyond; a global one, 503 `busy` beyond), bounded in time from the request's arrival (the
// wait for a DuckDB slot included), and cancelled (removed from the queue or interrupted) once
// every request waiting for it has gone.
import type { Context } from 'koa';
import { LRUCache } from 'lru-cache';
import type { Db } from '../warehouse/duckdb/db.ts';
import { SlotsBusy } from '../warehouse/duckdb/slots.ts';
import { querySeries, type BucketRow } from '../warehouse/bucket-series.ts';
import { loadStreamReports } from '../warehouse/stream-reports.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { parseStreamId } from '../warehouse/ids.ts';
import { problems } from './errors.ts';
import { Admission } from './admission.ts';
import { DeadlinePassed, requestSignal } from './request-signal.ts';
import { untilAborted } from './shared-work.ts';
import type { ServedSnapshot } from './snapshot-store.ts';

/** What a refused request is told to wait, in seconds. */
const RETRY_AFTER_SECONDS = 2;
/** Rough heap bytes of a cached row (an object of eight numbers). */
const ROW_BYTES = 120;

interface Computation {
  result: Promise<BucketRow[]>;
  /** Requests still waiting for it: when the last one leaves, the work is cancelled. */
  waiters: number;
  cancel: (reason: unknown) => void;
}

export class OnDemandSeries {
  /** Computed series, bounded in bytes (API_SERIES_CACHE_MB); concurrent requests share `running`. */
  private readonly done: LRUCache<string, BucketRow[]>;
  private readonly running = new Map<string, Computation>();
  private readonly admission: Admission;

  constructor(
    private readonly db: Db,
    private readonly layout: WarehouseLayout,
    private readonly timeoutMs: number,
    limits: { max: number; perTenant: number } = { max: 8, perTenant: 2 },
    cacheBytes = 16 * 2 ** 20,
  ) {
    this.admission = new Admission(limits.max, limits.perTenant);
    this.done = new LRUCache({ maxSize: Math.max(1, cacheBytes), sizeCalculation: (rows) => 64 + ROW_BYTES * rows.length });
  }

  /** Computations under way (for tests and metrics). */
  get inProgress(): number {
    return this.running.size;
  }

  /** Every non-empty bucket of the stream up to asOf, in time order, for the request `ctx`. */
  async series(snap: ServedSnapshot, streamId: string, bucketSeconds: number, ctx: Context): Promise<BucketRow[]> {
    const key = `${snap.id}|${streamId}|${bucketSeconds}`;
    const cached = this.done.get(key);
    if (cached) return cached;
    const { signal, dispose } = requestSignal(ctx, this.timeoutMs);
    let c = this.running.get(key);
    try {
      if (!c) {
        c = this.start(key, snap, streamId, bucketSeconds);
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

  private start(key: string, snap: ServedSnapshot, streamId: string, bucketSeconds: number): Computation {
    const customerId = parseStreamId(streamId)?.customerId ?? '';
    const admitted = this.admission.admit(customerId);
    if (!admitted.ok) {
      throw admitted.refusal.scope === 'tenant'
        ? problems.tooManyRequests('on-demand series', admitted.refusal.limit, RETRY_AFTER_SECONDS)
        : problems.busy(RETRY_AFTER_SECONDS);
    }
    const ac = new AbortController();
    const result = this.compute(snap, customerId, streamId, bucketSeconds, ac.signal);
    const c: Computation = { result, waiters: 0, cancel: (reason) => ac.abort(reason) };
    result
      .then((rows) => this.done.set(key, rows))
      // A failure (a timeout, a cancellation) is not remembered: the next request tries again.
      .catch(() => {})
      .finally(() => {
        admitted.release();
        if (this.running.get(key) === c) this.running.delete(key);
      });
    return c;
  }

  private async compute(snap: ServedSnapshot, customerId: string, streamId: string, bucketSeconds: number, signal: AbortSignal): Promise<BucketRow[]> {
    const inputs = customerId ? snap.customerInputs(this.layout, customerId) : null;
    if (!inputs) return [];
    // Temp tables live and die with the session's connection: nothing to drop by hand.
    return this.db.withSession(
      async (s) => {
        await loadStreamReports(s, inputs, streamId, new Date(snap.asOfMs));
        return (await querySeries(s, bucketSeconds)).get(streamId) ?? [];
      },
      { signal, bounded: true },
    );
  }
}
