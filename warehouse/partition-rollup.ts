// The rollups of one customer partition: deduplicate `raw_reports` up to asOf, then write the
// stream summaries of every window and the series of every standard bucket size as Parquet.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { BIGINT, LIST, TIMESTAMP, VARCHAR, listValue, timestampValue } from '@duckdb/node-api';
import { fillSql, quotedString, sqlFile, toNumber, type DbSession, type SqlParams, type SqlTypes } from './duckdb.ts';
import { STANDARD_BUCKET_SECONDS, WINDOWS, WINDOW_NAMES } from './windows.ts';
import { fsyncDir } from '../lib/fsx.ts';

export interface PartitionFigures {
  /** Rows read from the partition's good files. */
  rowsRead: number;
  /** Rows with ts after asOf, left for a later snapshot. */
  afterAsOf: number;
  /** Extra copies of reports already counted. */
  duplicatesDropped: number;
  /** Deduplicated reports with ts <= asOf. */
  reports: number;
  streams: number;
  summaryRows: number;
  seriesRows: number;
}

/** A DuckDB TIMESTAMP for a JS date (microseconds since the epoch, UTC). */
export function timestampParam(d: Date) {
  return timestampValue(BigInt(d.getTime()) * 1000n);
}

/** Parameters of stream_summaries.sql. */
export function summaryParams(asOf: Date, horizonSeconds: number): { params: SqlParams; types: SqlTypes } {
  const bounded = WINDOWS.filter((w) => w.seconds !== null).map((w) => BigInt(w.seconds!));
  return {
    params: {
      as_of: timestampParam(asOf),
      window_names: listValue([...WINDOW_NAMES]),
      window_seconds: listValue(bounded),
      horizon_seconds: horizonSeconds,
    },
    types: { as_of: TIMESTAMP, window_names: LIST(VARCHAR), window_seconds: LIST(BIGINT) },
  };
}

/** COPY a query to a Parquet file under a temporary name, then rename it into place. */
export async function copyToParquet(
  s: DbSession,
  query: string,
  file: string,
  params?: SqlParams,
  types?: SqlTypes,
): Promise<number> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    const rows = await s.run(
      fillSql(`COPY ({{query}}) TO {{file}} (FORMAT parquet, COMPRESSION zstd)`, { query, file: quotedString(tmp) }),
      params,
      types,
    );
    await fs.rename(tmp, file);
    await fsyncDir(path.dirname(file));
    return rows;
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

export async function writePartitionRollups(
  s: DbSession,
  opts: { asOf: Date; horizonSeconds: number; summariesFile: string; seriesFile: string },
): Promise<PartitionFigures> {
  const asOf = timestampParam(opts.asOf);
  const counts = await s.one<{ total: bigint; upto: bigint }>(
    `SELECT count(*) AS total, count(*) FILTER (WHERE ts <= $as_of) AS upto FROM raw_reports`,
    { as_of: asOf },
    { as_of: TIMESTAMP },
  );
  await s.run(sqlFile('dedup_reports'), { as_of: asOf }, { as_of: TIMESTAMP });
  const { reports, streams } = await s.one<{ reports: bigint; streams: bigint }>(
    `SELECT count(*) AS reports, count(DISTINCT streamId) AS streams FROM reports`,
  );

  const { params, types } = summaryParams(opts.asOf, opts.horizonSeconds);
  const summaryRows = await copyToParquet(s, sqlFile('stream_summaries'), opts.summariesFile, params, types);

  // One parameterised series query, run for each standard size (the API runs it for others).
  await s.run(`CREATE OR REPLACE TEMP TABLE series AS ${sqlFile('bucket_series')} LIMIT 0`, { bucket_seconds: 60 });
  for (const size of STANDARD_BUCKET_SECONDS) {
    await s.run(`INSERT INTO series ${sqlFile('bucket_series')}`, { bucket_seconds: size });
  }
  const seriesRows = await copyToParquet(
    s,
    `SELECT * FROM series ORDER BY bucketSeconds, streamId, bucketStart`,
    opts.seriesFile,
  );
  await s.run(`DROP TABLE series`);

  return {
    rowsRead: toNumber(counts.total),
    afterAsOf: toNumber(counts.total) - toNumber(counts.upto),
    duplicatesDropped: toNumber(counts.upto) - toNumber(reports),
    reports: toNumber(reports),
    streams: toNumber(streams),
    summaryRows,
    seriesRows,
  };
}
