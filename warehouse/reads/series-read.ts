// Reading a snapshot's precomputed series back on demand (read_series.sql): one stream's buckets of
// one standard size over a time range, or every stream of a customer, straight from the Parquet
// files, so that a reader's memory follows what it asked for, not the history.
import path from 'node:path';
import type { DbSession } from '../duckdb/index.ts';
import { fileList, fillSql, quotedString, sqlFile } from '../duckdb/index.ts';
import type { BucketRow } from '../figures/index.ts';
import { listFiles } from '../../lib/fsx.ts';

/**
 * Every series file of a customer in a snapshot (the layout contract: any .parquet at any depth
 * under stream_timeseries/customer=<id>/: one file per UTC day, or per block of past days).
 */
export function seriesGlob(snapshotDir: string, customerId: string): string {
  return path.join(snapshotDir, 'stream_timeseries', `customer=${customerId}`, '**', '*.parquet');
}

/**
 * A customer's series file and the UTC days it holds: `date` (its date= folder) through `last`
 * (`through-<last>.parquet`, a block of past days; else the same day). Both null: a file outside
 * any date= folder, read for every range.
 */
export interface SeriesFile {
  date: string | null;
  last: string | null;
  path: string;
}

const THROUGH = /(?:^|\/)through-(\d{4}-\d{2}-\d{2})\.parquet$/;

/**
 * The customer's series files, sorted by first day (dateless files first), listed from the
 * snapshot's folders: a bucket lies in the file of its start's date (every standard size divides a
 * day), so a read of a time range opens only the files of its days. Empty when the customer has none.
 */
export async function listSeriesFiles(snapshotDir: string, customerId: string): Promise<SeriesFile[]> {
  const root = path.join(snapshotDir, 'stream_timeseries', `customer=${customerId}`);
  const out = (await listFiles(root, '.parquet')).map((file) => {
    const rel = path.relative(root, file);
    // The innermost date= folder between the customer's folder and the file names its first day.
    const date = [...rel.matchAll(/(?:^|\/)date=(\d{4}-\d{2}-\d{2})(?=\/)/g)].at(-1)?.[1] ?? null;
    const through = THROUGH.exec(rel)?.[1];
    return { date, last: date === null ? null : through !== undefined && through > date ? through : date, path: file };
  });
  return out.sort((a, b) => ((a.date ?? '') < (b.date ?? '') ? -1 : (a.date ?? '') > (b.date ?? '') ? 1 : a.path < b.path ? -1 : 1));
}

/** The files of `files` that can hold buckets starting in [fromMs, toMs] (null: unbounded). */
export function seriesFilesIn(files: readonly SeriesFile[], fromMs: number | null, toMs: number | null): string[] {
  const first = fromMs === null ? null : new Date(fromMs).toISOString().slice(0, 10);
  const last = toMs === null ? null : new Date(toMs).toISOString().slice(0, 10);
  return files
    .filter((f) => f.date === null || ((first === null || f.last! >= first) && (last === null || f.date <= last)))
    .map((f) => f.path);
}

export interface SeriesQuery {
  /** The series files to read (seriesFilesIn); none: no bucket. */
  files: readonly string[];
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
  if (q.files.length === 0) return emptyColumns();
  const sql = fillSql(sqlFile('read_series'), {
    files: fileList(q.files),
    stream_filter: q.streamId === null ? 'true' : `streamId = ${quotedString(q.streamId)}`,
    stream_column: q.streamId === null ? 'streamId,' : '',
  });
  const c = await s.columns<Omit<SeriesColumns, 'streamId'> & { streamId?: string[] } & Record<string, unknown[]>>(sql, {
    bucket_seconds: q.bucketSeconds,
    from_us: q.fromMs === null ? MIN_US : BigInt(q.fromMs) * 1000n,
    to_us: q.toMs === null ? MAX_US : BigInt(q.toMs) * 1000n,
  });
  return { ...c, streamId: c.streamId ?? new Array<string>(c.startMs.length).fill(q.streamId!) };
}

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

/**
 * Start (ms) of each stream's first minute bucket (where its `all` window begins, at every
 * standard size: see first_series_minutes.sql); a stream with none is absent. The files are
 * sorted by date: the earliest day is looked at first (where most streams' first buckets are),
 * the rest only for the streams it lacks.
 */
export async function firstMinutes(s: DbSession, files: readonly string[], streamIds: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const part of [files.slice(0, 1), files.slice(1)]) {
    const missing = streamIds.filter((id) => !out.has(id));
    if (part.length === 0 || missing.length === 0) continue;
    const rows = await s.all<{ streamId: string; first: number }>(
      fillSql(sqlFile('first_series_minutes'), { files: fileList(part), streams: `(${missing.map(quotedString).join(', ')})` }),
    );
    for (const r of rows) out.set(r.streamId, r.first);
  }
  return out;
}
