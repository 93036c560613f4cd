// Series of bucket sizes that no rollup precomputed (any size from 60 to 86400 s): computed with
// the shared series SQL (series_combine.sql over report_pieces.sql, warehouse/figures/bucket-series.ts)
// over the stream's raw files and cached per snapshot. The work is admitted (a per-tenant limit,
// 429 beyond; a global one, 503 `busy` beyond), bounded in time from the request's arrival (the
// wait for a DuckDB slot included), and cancelled (removed from the queue or interrupted) once
// every request waiting for it has gone.
import type { Context } from 'koa';
import { LRUCache } from 'lru-cache';
import type { Db } from '../warehouse/duckdb/index.ts';
import { queryQualitySeries, querySeries, type BucketRow, type QualityBucketRow } from '../warehouse/figures/index.ts';
import { inputsWithin, loadStreamReports } from '../warehouse/reads/index.ts';
import { keepFilteredReports, type BreakdownFilters } from '../warehouse/reads/index.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { parseStreamId } from '../warehouse/ids.ts';
import { AdmittedWork } from '../served/shared-work.ts';
import type { ServedSnapshot } from '../served/snapshot-store.ts';

/**
 * The range a series with quality figures or filters is computed for: only the landed files of the
 * UTC dates from `fromMs` (its first bucket) on are read (inputsWithin). With filters, the sessions
 * it counts are those the filters keep by their earliest report from `fromMs` on, the breakdown's
 * rule (filtered_reports.sql).
 */
export interface SeriesRange {
  fromMs: number;
  filters: BreakdownFilters;
  /** The filters' canonical form: what makes two requests the same work. */
  canonical: readonly string[];
}

/** Rough heap bytes of a cached row (an object of eight numbers, thirteen with the quality figures). */
const ROW_BYTES = 180;

export class OnDemandSeries {
  /** Computed series, bounded in bytes (API_SERIES_CACHE_MB); concurrent requests share the work under way. */
  private readonly done: LRUCache<string, BucketRow[]>;
  private readonly work: AdmittedWork<BucketRow[]>;

  constructor(
    private readonly db: Db,
    private readonly layout: WarehouseLayout,
    timeoutMs: number,
    limits: { max: number; perTenant: number } = { max: 8, perTenant: 2 },
    cacheBytes = 16 * 2 ** 20,
  ) {
    this.work = new AdmittedWork('on-demand series', timeoutMs, limits);
    this.done = new LRUCache({ maxSize: Math.max(1, cacheBytes), sizeCalculation: (rows) => 64 + ROW_BYTES * rows.length });
  }

  /** Computations under way (for tests and metrics). */
  get inProgress(): number {
    return this.work.inProgress;
  }

  /** Every non-empty bucket of the stream up to asOf (from `range`'s date on), in time order, for the request `ctx`. */
  series(snap: ServedSnapshot, streamId: string, bucketSeconds: number, ctx: Context, range?: SeriesRange): Promise<BucketRow[]> {
    return this.cached(snap, streamId, bucketSeconds, false, ctx, range);
  }

  /** The same with each bucket's quality figures (series_quality.sql). */
  qualitySeries(snap: ServedSnapshot, streamId: string, bucketSeconds: number, ctx: Context, range?: SeriesRange): Promise<QualityBucketRow[]> {
    return this.cached(snap, streamId, bucketSeconds, true, ctx, range) as Promise<QualityBucketRow[]>;
  }

  private async cached(snap: ServedSnapshot, streamId: string, bucketSeconds: number, quality: boolean, ctx: Context, range?: SeriesRange): Promise<BucketRow[]> {
    const key = [snap.id, streamId, bucketSeconds, quality ? 'quality' : 'plain', ...(range ? [range.fromMs, ...range.canonical] : [])].join('\0');
    const cached = this.done.get(key);
    if (cached) return cached;
    const customerId = parseStreamId(streamId)?.customerId ?? '';
    return this.work.run(ctx, key, customerId, async (signal) => {
      const rows = await this.compute(snap, customerId, streamId, { bucketSeconds, quality, range }, signal);
      // A failure (a timeout, a cancellation) is not remembered: the next request tries again.
      this.done.set(key, rows);
      return rows;
    });
  }

  private async compute(
    snap: ServedSnapshot,
    customerId: string,
    streamId: string,
    q: { bucketSeconds: number; quality: boolean; range: SeriesRange | undefined },
    signal: AbortSignal,
  ): Promise<BucketRow[]> {
    const inputs = customerId ? snap.customerInputs(this.layout, customerId) : null;
    if (!inputs) return [];
    // Temp tables live and die with the session's connection: nothing to drop by hand.
    return this.db.withSession(
      async (s) => {
        await loadStreamReports(s, q.range ? inputsWithin(inputs, q.range.fromMs, snap.asOfMs) : inputs, streamId, new Date(snap.asOfMs));
        let source = 'reports';
        if (q.range && q.range.canonical.length > 0) {
          await keepFilteredReports(s, 'reports', new Date(q.range.fromMs), q.range.filters);
          source = 'kept_reports';
        }
        const rows = q.quality ? await queryQualitySeries(s, q.bucketSeconds, source) : await querySeries(s, q.bucketSeconds, source);
        return rows.get(streamId) ?? [];
      },
      { signal, bounded: true, releaseAfter: true },
    );
  }
}
