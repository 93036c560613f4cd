// The bucketed series (series_combine.sql over report_pieces.sql) read back as typed rows, per
// stream, for whatever a relation of deduplicated reports holds: the API's on-demand sizes and
// the pilot reports use it; the rollups run the same SQL over partition states.
import { z } from 'zod';
import type { DbSession } from './duckdb/session.ts';
import { pieceSql } from './piece-columns.ts';
import { count, fraction, isoInstant, nonNegative } from '../lib/json-schema.ts';

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

export function toBucketJson({ startMs, ...figures }: BucketRow): BucketJson {
  return { start: new Date(startMs).toISOString(), ...figures };
}

/** An empty bucket: every figure zero. */
export function emptyBucket(startMs: number): BucketRow {
  return { startMs, sessions: 0, bytesOffloaded: 0, bytesFallback: 0, offloadRatio: 0, avgPeerCount: 0, avgBufferHealth: 0, rebufferEvents: 0 };
}

/** Every bucket from `from` to `to` (starts, ms, both included), the empty ones with zeros. */
export function fillBuckets(rows: readonly BucketRow[], from: number, to: number, bucketSeconds: number): BucketRow[] {
  const step = bucketSeconds * 1000;
  const out: BucketRow[] = [];
  let i = 0;
  while (i < rows.length && rows[i]!.startMs < from) i++;
  for (let start = from; start <= to; start += step) {
    const row = rows[i];
    if (row && row.startMs === start) {
      out.push(row);
      i++;
    } else {
      out.push(emptyBucket(start));
    }
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
