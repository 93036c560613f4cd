// The bucketed series (series_combine.sql over report_pieces.sql) read back as typed rows, per
// stream, for whatever a relation of deduplicated reports holds: the API's on-demand sizes and
// the pilot reports use it; the rollups run the same SQL over partition states.
import { z } from 'zod';
import type { DbSession } from '../duckdb/index.ts';
import { pieceSql } from './piece-columns.ts';
import { count, fraction, isoInstant, nonNegative } from '../../lib/json-schema.ts';

/**
 * The series query over deduplicated reports: `source` is a relation (a table name or a
 * parenthesised query built from code constants, never from input). Parameter: $bucket_seconds.
 */
export function bucketSeriesSql(source = 'reports'): string {
  return pieceSql('series_combine', { pieces: `(${pieceSql('report_pieces', { source })})` });
}

/** One non-empty bucket of a stream's series (start in ms since the epoch). */
export interface BucketRow {
  startMs: number;
  sessions: number;
  bytesOffloaded: number;
  bytesFallback: number;
  offloadRatio: number;
  avgPeerCount: number;
  avgBufferHealth: number;
  rebufferEvents: number;
}

/** A bucket as the API and the pilot reports show it: its start as an ISO 8601 UTC string. */
export const BucketSchema = z
  .object({
    start: isoInstant(),
    sessions: count().describe('distinct sessions that reported in the bucket'),
    bytesOffloaded: count(),
    bytesFallback: count(),
    offloadRatio: fraction(),
    avgPeerCount: nonNegative(),
    avgBufferHealth: nonNegative(),
    rebufferEvents: count().describe('sum of stallCount'),
  })
  .meta({ id: 'Bucket' });

export type BucketJson = z.infer<typeof BucketSchema>;

/** A bucket's quality figures (series_quality.sql): the same definitions as a window's. */
export interface BucketQuality {
  watchMs: number;
  stallMs: number;
  rebufferRatio: number;
  startupTimeP95Ms: number | null;
  p2pConnectionSuccess: number | null;
}

/** A bucket with its quality figures (the series route's `quality=true`). */
export const QualityBucketSchema = BucketSchema.extend({
  watchMs: count().describe('sum of watchMs'),
  stallMs: count().describe('sum of stallMs'),
  rebufferRatio: fraction().describe('stallMs / (watchMs + stallMs) of the bucket; 0 when both are 0'),
  startupTimeP95Ms: nonNegative()
    .nullable()
    .describe("95th percentile (continuous) of startupMs over the bucket's sessions that have one (a session's seq = 0 report is in the bucket); null when none has"),
  p2pConnectionSuccess: fraction().nullable().describe('Σ p2pConnSuccesses / Σ p2pConnAttempts of the bucket; null without attempts'),
}).meta({ id: 'QualityBucket' });

export type QualityBucketJson = z.infer<typeof QualityBucketSchema>;
export type QualityBucketRow = BucketRow & BucketQuality;

/** A bucket's quality figures when it has no report. */
export const NO_QUALITY: BucketQuality = { watchMs: 0, stallMs: 0, rebufferRatio: 0, startupTimeP95Ms: null, p2pConnectionSuccess: null };

export function toBucketJson<R extends BucketRow>({ startMs, ...figures }: R): Omit<R, 'startMs'> & { start: string } {
  return { start: new Date(startMs).toISOString(), ...figures };
}

/** An empty bucket: every figure zero. */
export function emptyBucket(startMs: number): BucketRow {
  return { startMs, sessions: 0, bytesOffloaded: 0, bytesFallback: 0, offloadRatio: 0, avgPeerCount: 0, avgBufferHealth: 0, rebufferEvents: 0 };
}

/** Every bucket from `from` to `to` (starts, ms, both included), the empty ones with zeros (`empty`'s). */
export function fillBuckets<R extends BucketRow = BucketRow>(rows: readonly R[], from: number, to: number, bucketSeconds: number, empty: (startMs: number) => R = emptyBucket as (startMs: number) => R): R[] {
  const step = bucketSeconds * 1000;
  const out: R[] = [];
  let i = 0;
  while (i < rows.length && rows[i]!.startMs < from) i++;
  for (let start = from; start <= to; start += step) {
    const row = rows[i];
    if (row && row.startMs === start) {
      out.push(row);
      i++;
    } else {
      out.push(empty(start));
    }
  }
  return out;
}

/**
 * Every stream's non-empty buckets of `bucketSeconds` over `source` (deduplicated reports) with
 * their quality figures, in time order: the series query and series_quality.sql over the same
 * pieces, joined by bucket (both have a row for every non-empty bucket).
 */
export async function queryQualitySeries(s: DbSession, bucketSeconds: number, source = 'reports'): Promise<Map<string, QualityBucketRow[]>> {
  const series = await querySeries(s, bucketSeconds, source);
  const rows = await s.all<BucketQuality & { streamId: string; startMs: number }>(
    `SELECT streamId, epoch_ms(bucketStart) AS startMs, watchMs, stallMs, rebufferRatio, startupTimeP95Ms, p2pConnectionSuccess
     FROM (${pieceSql('series_quality', { pieces: `(${pieceSql('report_pieces', { source })})` })})`,
    { bucket_seconds: bucketSeconds },
  );
  const quality = new Map(rows.map(({ streamId, startMs, ...q }) => [`${streamId}\0${startMs}`, q]));
  const out = new Map<string, QualityBucketRow[]>();
  for (const [streamId, buckets] of series) {
    out.set(streamId, buckets.map((b) => ({ ...b, ...(quality.get(`${streamId}\0${b.startMs}`) ?? NO_QUALITY) })));
  }
  return out;
}

/** Every stream's non-empty buckets of `bucketSeconds` over `source` (deduplicated reports), in time order. */
export async function querySeries(s: DbSession, bucketSeconds: number, source = 'reports'): Promise<Map<string, BucketRow[]>> {
  const rows = await s.all<BucketRow & { streamId: string }>(
    `SELECT streamId, epoch_ms(bucketStart) AS startMs, sessions, bytesOffloaded, bytesFallback, offloadRatio,
            avgPeerCount, avgBufferHealth, rebufferEvents
     FROM (${bucketSeriesSql(source)}) ORDER BY streamId, bucketStart`,
    { bucket_seconds: bucketSeconds },
  );
  const out = new Map<string, BucketRow[]>();
  for (const { streamId, ...bucket } of rows) {
    let list = out.get(streamId);
    if (!list) out.set(streamId, (list = []));
    list.push(bucket);
  }
  return out;
}
