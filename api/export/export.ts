// GET /telemetry/export bodies: one stream's deduplicated reports in a window, as CSV, NDJSON,
// Parquet or an Arrow IPC stream, computed a UTC day at a time and streamed (text formats and
// Parquet through scratch files DuckDB writes), so that server memory stays bounded whatever the
// size of the export.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { TIMESTAMP, type DuckDBDataChunk } from '@duckdb/node-api';
import { fileList, fillSql, quotedString, sqlFile, type Db, type DbSession, type SqlParams } from '../../warehouse/duckdb.ts';
import { projectionSql, REPORT_COLUMNS } from '../../warehouse/report-columns.ts';
import { timestampParam } from '../../warehouse/duckdb.ts';
import { parseStreamId } from '../../warehouse/ids.ts';
import { windowSeconds, type WindowName } from '../../warehouse/windows.ts';
import { hostScratchDir, type WarehouseLayout } from '../../warehouse/layout.ts';
import type { ServedSnapshot } from '../snapshot-store.ts';
import { ARROW_COLUMNS_SQL, arrowStream } from './arrow.ts';
import { CSV_COLUMNS_SQL, CSV_HEADER, NDJSON_COLUMNS_SQL } from './lines.ts';

export const EXPORT_FORMATS = ['csv', 'ndjson', 'parquet', 'arrow'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_MEDIA: Record<ExportFormat, { type: string; ext: string }> = {
  csv: { type: 'text/csv; charset=utf-8', ext: 'csv' },
  ndjson: { type: 'application/x-ndjson', ext: 'ndjson' },
  parquet: { type: 'application/vnd.apache.parquet', ext: 'parquet' },
  arrow: { type: 'application/vnd.apache.arrow.stream', ext: 'arrows' },
};

const ALL_COLUMNS = REPORT_COLUMNS.map((c) => c.name);

/** The attachment's file name: customer, stream name and window, safe in any file system. */
export function exportFileName(streamId: string, window: WindowName, format: ExportFormat): string {
  const id = parseStreamId(streamId);
  const base = id ? `${id.customerId}_${id.name}` : 'export';
  return `${base}_${window}.${EXPORT_MEDIA[format].ext}`;
}

/** The partition files of the stream's customer that can hold reports of the window, by UTC day. */
function exportDays(snap: ServedSnapshot, layout: WarehouseLayout, streamId: string, window: WindowName): { presentColumns: string[]; days: string[][] } {
  const customerId = parseStreamId(streamId)?.customerId;
  const partition = snap.manifest.partitions.find((p) => p.customerId === customerId);
  if (!partition) return { presentColumns: [], days: [] };
  const seconds = windowSeconds(window);
  const firstDay = seconds === null ? '' : new Date(snap.asOfMs - seconds * 1000).toISOString().slice(0, 10);
  const lastDay = new Date(snap.asOfMs).toISOString().slice(0, 10);
  const byDay = new Map<string, string[]>();
  for (const f of partition.files) {
    const day = /date=(\d{4}-\d{2}-\d{2})\//.exec(f.path)?.[1];
    if (!day || day < firstDay || day > lastDay) continue;
    if (!byDay.has(day)) byDay.set(day, []);
    byDay.get(day)!.push(path.join(layout.rawReports, f.path));
  }
  return { presentColumns: partition.presentColumns, days: [...byDay.keys()].sort().map((d) => byDay.get(d)!) };
}

const TYPES = { as_of: TIMESTAMP, lower: TIMESTAMP };

/**
 * The export runs one UTC day at a time: every copy of a report lands in the folder of its ts's
 * date (session-report.md), so deduplication and ordering need only one day's rows, and DuckDB's
 * working memory follows the largest day rather than the whole export.
 */
class DayQueries {
  readonly params: SqlParams;
  constructor(
    private readonly days: string[][],
    private readonly presentColumns: string[],
    streamId: string,
    snap: ServedSnapshot,
    window: WindowName,
  ) {
    const seconds = windowSeconds(window);
    this.params = {
      stream_id: streamId,
      as_of: timestampParam(new Date(snap.asOfMs)),
      lower: seconds === null ? null : timestampParam(new Date(snap.asOfMs - seconds * 1000)),
    };
  }

  get count(): number {
    return this.days.length;
  }

  sql(day: number): string {
    return fillSql(sqlFile('export_reports'), {
      files: fileList(this.days[day]!),
      projection: projectionSql(ALL_COLUMNS, new Set(this.presentColumns)),
    });
  }

  /** A typed empty result, for an export with no day to read. */
  empty(): string {
    return `SELECT ${projectionSql(ALL_COLUMNS, new Set())} WHERE $stream_id IS NULL AND $as_of IS NULL AND $lower IS NULL`;
  }
}

async function scratchFile(layout: WarehouseLayout): Promise<string> {
  const dir = hostScratchDir(layout);
  await fs.promises.mkdir(dir, { recursive: true });
  return path.join(dir, `export-${process.pid}-${randomBytes(6).toString('hex')}`);
}

/** Stream a file DuckDB wrote, then remove it. */
async function* drain(file: string): AsyncGenerator<Buffer> {
  try {
    for await (const buf of fs.createReadStream(file, { highWaterMark: 1 << 16 })) yield buf as Buffer;
  } finally {
    await fs.promises.rm(file, { force: true });
  }
}

/** CSV or NDJSON: each day written by DuckDB's own writer to a scratch file, then streamed. */
async function* textDays(s: DbSession, layout: WarehouseLayout, q: DayQueries, format: 'csv' | 'ndjson'): AsyncGenerator<Buffer> {
  if (format === 'csv') yield Buffer.from(CSV_HEADER);
  for (let day = 0; day < q.count; day++) {
    const file = await scratchFile(layout);
    const columns = format === 'csv' ? CSV_COLUMNS_SQL : NDJSON_COLUMNS_SQL;
    const options = format === 'csv' ? `FORMAT csv, HEADER false` : `FORMAT json`;
    try {
      await s.run(`COPY (SELECT ${columns} FROM (${q.sql(day)})) TO ${quotedString(file)} (${options})`, q.params, TYPES);
    } catch (err) {
      await fs.promises.rm(file, { force: true });
      throw err;
    }
    yield* drain(file);
  }
}

/** Arrow: each day's rows converted to record batches as DuckDB streams them. */
async function* arrowDays(s: DbSession, q: DayQueries): AsyncGenerator<Buffer> {
  async function* chunks(): AsyncGenerator<DuckDBDataChunk> {
    const select = (sql: string) => `SELECT ${ARROW_COLUMNS_SQL} FROM (${sql})`;
    if (q.count === 0) {
      yield* await s.stream(select(q.empty()), q.params, TYPES);
      return;
    }
    for (let day = 0; day < q.count; day++) yield* await s.stream(select(q.sql(day)), q.params, TYPES);
  }
  yield* arrowStream(chunks());
}

/** Parquet needs its footer last: days go to scratch files, which one COPY joins in order. */
async function parquetFile(s: DbSession, layout: WarehouseLayout, q: DayQueries): Promise<string> {
  const parts: string[] = [];
  const out = await scratchFile(layout);
  try {
    if (q.count === 0) {
      await s.run(`COPY (${q.empty()}) TO ${quotedString(out)} (FORMAT parquet, COMPRESSION zstd)`, q.params, TYPES);
      return out;
    }
    for (let day = 0; day < q.count; day++) {
      const part = await scratchFile(layout);
      parts.push(part);
      await s.run(`COPY (${q.sql(day)}) TO ${quotedString(part)} (FORMAT parquet)`, q.params, TYPES);
    }
    // The parts are read in list order, each already sorted: no sort, no dedup, memory flat.
    await s.run(`COPY (SELECT * FROM read_parquet(${fileList(parts)})) TO ${quotedString(out)} (FORMAT parquet, COMPRESSION zstd)`);
    return out;
  } catch (err) {
    await fs.promises.rm(out, { force: true });
    throw err;
  } finally {
    for (const p of parts) await fs.promises.rm(p, { force: true });
  }
}

/** Run `body` over a session that is closed when the stream ends, fails or is abandoned. */
function sessionStream(s: DbSession, body: AsyncGenerator<Buffer>): Readable {
  async function* owned(): AsyncGenerator<Buffer> {
    try {
      yield* body;
    } finally {
      s.close();
    }
  }
  return Readable.from(owned(), { objectMode: false, highWaterMark: 1 << 16 });
}

/**
 * Start the export and return its body. The first day (all of it, for Parquet) is computed before
 * this resolves, so that a failure still becomes an error response rather than a cut-off download.
 */
export async function startExport(
  db: Db,
  layout: WarehouseLayout,
  snap: ServedSnapshot,
  streamId: string,
  window: WindowName,
  format: ExportFormat,
): Promise<Readable> {
  const { presentColumns, days } = exportDays(snap, layout, streamId, window);
  const q = new DayQueries(days, presentColumns, streamId, snap, window);
  const s = await db.session();
  try {
    if (format === 'parquet') {
      const file = await parquetFile(s, layout, q);
      s.close();
      return Readable.from(drain(file), { objectMode: false });
    }
    const body = format === 'arrow' ? arrowDays(s, q) : textDays(s, layout, q, format);
    // Compute the first piece now: errors before the headers are sent become problems.
    const first = await body.next();
    async function* withFirst(): AsyncGenerator<Buffer> {
      if (!first.done) yield first.value;
      yield* body;
    }
    return sessionStream(s, withFirst());
  } catch (err) {
    s.close();
    throw err;
  }
}
