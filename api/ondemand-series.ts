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

export class OnDemandSeries {
  private readonly cache = new LRUCache<string, Promise<BucketRow[]>>({ max: 2000 });

  constructor(
    private readonly db: Db,
    private readonly layout: WarehouseLayout,
    private readonly timeoutMs: number,
  ) {}

  /** Every non-empty bucket of the stream up to asOf, in time order. */
  series(snap: ServedSnapshot, streamId: string, bucketSeconds: number): Promise<BucketRow[]> {
    const key = `${snap.id}|${streamId}|${bucketSeconds}`;
    let p = this.cache.get(key);
    if (!p) {
      p = this.compute(snap, streamId, bucketSeconds);
      // A failure (a timeout) is not remembered: the next request tries again.
      p.catch(() => this.cache.delete(key));
      this.cache.set(key, p);
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
