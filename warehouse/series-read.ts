// Reading a snapshot's precomputed series back on demand (read_series.sql): one stream's buckets of
// one standard size over a time range, or every stream of a customer, straight from the Parquet
// files, so that a reader's memory follows what it asked for, not the history.
import path from 'node:path';
import { fillSql, quotedString, sqlFile, type DbSession } from './duckdb.ts';
import type { BucketRow } from './bucket-series.ts';

/**
 * Every series file of a customer in a snapshot (the layout contract: any .parquet at any depth
 * under stream_timeseries/customer=<id>/: one file today, one per UTC day with the incremental
 * warehouse).
 */
export function seriesGlob(snapshotDir: string, customerId: string): string {
  return path.join(snapshotDir, 'stream_timeseries', `customer=${customerId}`, '**', '*.parquet');
}

export interface SeriesQuery {
  /** The customer's series glob (seriesGlob). */
  glob: string;
  bucketSeconds: number;
  /** One stream, or every stream of the files. */
  streamId: string | null;
  /** Bucket starts from..to, ms since the epoch, both included; null: unbounded. */
  fromMs: number | null;
  toMs: number | null;
}

/** Non-empty buckets as columns (one array per figure, ordered by stream then start). */
export interface SeriesColumns {
  streamId: string[];
  startMs: number[];
  sessions: number[];
  bytesOffloaded: number[];
  bytesFallback: number[];
  offloadRatio: number[];
  avgPeerCount: number[];
  avgBufferHealth: number[];
  rebufferEvents: number[];
}

// Far outside any real bucket, inside DuckDB's timestamp range.
const MIN_US = -(2n ** 52n);
const MAX_US = 2n ** 52n;

export async function readSeriesColumns(s: DbSession, q: SeriesQuery): Promise<SeriesColumns> {
  // The stream is spliced as a quoted literal rather than bound, so that the filter reaches the
  // Parquet scan as a table filter and prunes row groups by their statistics.
  const sql = fillSql(sqlFile('read_series'), {
    files: quotedString(q.glob),
    stream_filter: q.streamId === null ? 'true' : `streamId = ${quotedString(q.streamId)}`,
  });
  try {
    return await s.columns<SeriesColumns & Record<string, unknown[]>>(sql, {
      bucket_seconds: q.bucketSeconds,
      from_us: q.fromMs === null ? MIN_US : BigInt(q.fromMs) * 1000n,
      to_us: q.toMs === null ? MAX_US : BigInt(q.toMs) * 1000n,
    });
  } catch (err) {
    // A customer without series files (nothing to bucket) has no buckets, not an error.
    if (NO_FILES.test((err as Error).message)) return emptyColumns();
    throw err;
  }
}

const NO_FILES = /No files found that match the pattern/i;

export function emptyColumns(): SeriesColumns {
  return { streamId: [], startMs: [], sessions: [], bytesOffloaded: [], bytesFallback: [], offloadRatio: [], avgPeerCount: [], avgBufferHealth: [], rebufferEvents: [] };
}

/** Non-empty buckets as rows, by stream (ordered by start); streams with none are absent. */
export async function readSeries(s: DbSession, q: SeriesQuery): Promise<Map<string, BucketRow[]>> {
  const c = await readSeriesColumns(s, q);
  const out = new Map<string, BucketRow[]>();
  for (let i = 0; i < c.startMs.length; i++) {
    const id = c.streamId[i]!;
    let list = out.get(id);
    if (!list) out.set(id, (list = []));
    list.push({
      startMs: c.startMs[i]!,
      sessions: c.sessions[i]!,
      bytesOffloaded: c.bytesOffloaded[i]!,
      bytesFallback: c.bytesFallback[i]!,
      offloadRatio: c.offloadRatio[i]!,
      avgPeerCount: c.avgPeerCount[i]!,
      avgBufferHealth: c.avgBufferHealth[i]!,
      rebufferEvents: c.rebufferEvents[i]!,
    });
  }
  return out;
}

/** Start (ms) of the stream's first non-empty bucket of this size, or null when it has none. */
export async function firstBucketStart(s: DbSession, glob: string, streamId: string, bucketSeconds: number): Promise<number | null> {
  let rows: { first: bigint | number | null }[];
  try {
    rows = await s.all<{ first: bigint | number | null }>(
      fillSql(sqlFile('first_series_bucket'), { files: quotedString(glob), stream: quotedString(streamId) }),
      { bucket_seconds: bucketSeconds },
    );
  } catch (err) {
    if (NO_FILES.test((err as Error).message)) return null;
    throw err;
  }
  const first = rows[0]?.first;
  return first === null || first === undefined ? null : Number(first);
}
