// Series of bucket sizes that no rollup precomputed (any size from 60 to 86400 s): computed with
// the shared bucket_series.sql over the stream's raw files, cached per snapshot, and cancelled
// when they take longer than the query timeout.
import { LRUCache } from 'lru-cache';
import type { Db } from '../warehouse/duckdb.ts';
import { querySeries, type BucketRow } from '../warehouse/bucket-series.ts';
import { loadStreamReports } from '../warehouse/stream-reports.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { parseStreamId } from '../warehouse/ids.ts';
import { problems } from './errors.ts';
import type { ServedSnapshot } from './snapshot-store.ts';

/** Rough heap bytes of a cached row (an object of eight numbers). */
const ROW_BYTES = 120;

export class OnDemandSeries {
  /** Computed series, bounded in bytes (API_SERIES_CACHE_MB); concurrent requests share `pending`. */
  private readonly cache: LRUCache<string, BucketRow[]>;
  private readonly pending = new Map<string, Promise<BucketRow[]>>();

  constructor(
    private readonly db: Db,
    private readonly layout: WarehouseLayout,
    private readonly timeoutMs: number,
    cacheBytes = 16 * 2 ** 20,
  ) {
    this.cache = new LRUCache({ maxSize: Math.max(1, cacheBytes), sizeCalculation: (rows) => 64 + ROW_BYTES * rows.length });
  }

  /** Every non-empty bucket of the stream up to asOf, in time order. */
  series(snap: ServedSnapshot, streamId: string, bucketSeconds: number): Promise<BucketRow[]> {
    const key = `${snap.id}|${streamId}|${bucketSeconds}`;
    const hit = this.cache.get(key);
    if (hit) return Promise.resolve(hit);
    let p = this.pending.get(key);
    if (!p) {
      // A failure (a timeout) is not remembered: the next request tries again.
      p = this.compute(snap, streamId, bucketSeconds).then((rows) => {
        this.cache.set(key, rows);
        return rows;
      });
      this.pending.set(key, p);
      const done = () => this.pending.delete(key);
      p.then(done, done);
    }
    return p;
  }

  private async compute(snap: ServedSnapshot, streamId: string, bucketSeconds: number): Promise<BucketRow[]> {
    const customerId = parseStreamId(streamId)?.customerId;
    const inputs = customerId ? snap.customerInputs(this.layout, customerId) : null;
    if (!inputs) return [];
    return this.db.withSession(async (s) => {
      const timer = setTimeout(() => s.conn.interrupt(), this.timeoutMs);
      try {
        await loadStreamReports(s, inputs, streamId, new Date(snap.asOfMs));
        return (await querySeries(s, bucketSeconds)).get(streamId) ?? [];
      } catch (err) {
        if (/INTERRUPT/i.test((err as Error).message)) throw problems.timeout();
        throw err;
      } finally {
        clearTimeout(timer);
        await s.run('DROP TABLE IF EXISTS raw_reports; DROP TABLE IF EXISTS reports').catch(() => {});
      }
    });
  }
}
