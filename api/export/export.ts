// GET /telemetry/export bodies: one stream's deduplicated reports in a window, as CSV, NDJSON,
// Parquet or an Arrow IPC stream, computed a day or a few hours at a time (slicesOfDay) and
// streamed through scratch files DuckDB writes, so that server memory stays bounded whatever the
// size of the export.
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { TIMESTAMP, type DuckDBDataChunk } from '@duckdb/node-api';
import type { Db } from '../../warehouse/duckdb/index.ts';
import type { DbSession } from '../../warehouse/duckdb/index.ts';
import { timestampParam, type SqlParams } from '../../warehouse/duckdb/index.ts';
import { fileList, fillSql, quotedString, sqlFile } from '../../warehouse/duckdb/index.ts';
import { REPORT_COLUMNS } from '../../warehouse/session-reports/index.ts';
import { projectionSql, provenanceSql } from '../../warehouse/session-reports/index.ts';
import { parseStreamId } from '../../warehouse/ids.ts';
import { windowSeconds, type WindowName } from '../../warehouse/figures/index.ts';
import type { WarehouseLayout } from '../../warehouse/layout.ts';
import type { InputFile } from '../../warehouse/snapshots/index.ts';
import { schemaColumns } from '../../warehouse/landing/index.ts';
import { newScratchFile } from './scratch.ts';
import type { ServedSnapshot } from '../../served/snapshot-store.ts';
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

/** A UTC day of landed files: their paths, their total size and the columns some of them have. */
interface ExportDay {
  day: string;
  files: string[];
  bytes: number;
  present: ReadonlySet<string>;
}

/** The partition files of the stream's customer that can hold reports of the window, by UTC day. */
function exportDays(
  snap: ServedSnapshot,
  layout: WarehouseLayout,
  streamId: string,
  window: WindowName,
): ExportDay[] {
  const customerId = parseStreamId(streamId)?.customerId;
  const partition = snap.manifest.partitions.find((p) => p.customerId === customerId);
  if (!partition) return [];
  const seconds = windowSeconds(window);
  const firstDay = seconds === null ? '' : new Date(snap.asOfMs - seconds * 1000).toISOString().slice(0, 10);
  const lastDay = new Date(snap.asOfMs).toISOString().slice(0, 10);
  const byDay = new Map<string, InputFile[]>();
  for (const f of partition.files) {
    const day = /date=(\d{4}-\d{2}-\d{2})\//.exec(f.path)?.[1];
    if (!day || day < firstDay || day > lastDay) continue;
    const list = byDay.get(day);
    if (list) list.push(f);
    else byDay.set(day, [f]);
  }
  return [...byDay.keys()].sort().map((day) => {
    const inputs = byDay.get(day)!;
    const files = inputs.map((f) => path.join(layout.rawReports, f.path));
    return { day, files, bytes: inputs.reduce((a, f) => a + f.size, 0), present: presentIn(inputs, partition.presentColumns) };
  });
}

/**
 * The columns that some of `files` has, from their recorded schemas (a column that none of a
 * query's files has cannot be named in it), or `partition`'s when a schema is not recorded.
 */
function presentIn(files: readonly InputFile[], partition: readonly string[]): ReadonlySet<string> {
  if (files.some((f) => f.schema === undefined)) return new Set(partition);
  return new Set(files.flatMap((f) => schemaColumns(f.schema!)));
}

const TYPES = { as_of: TIMESTAMP, lower: TIMESTAMP, from: TIMESTAMP, until: TIMESTAMP };

/**
 * COPY into the 0600 file made for it: DuckDB otherwise writes a temporary file beside an existing
 * one and renames it over, with the umask's mode (0644).
 */
const IN_PLACE = 'USE_TMP_FILE false';

/**
 * Compressed Parquet bytes of a day's files that one export query reads at most (about 50 k
 * reports; `API_EXPORT_SLICE_MB`). Every copy of a report has the same ts (docs/metrics.md),
 * so a day's reports can be deduplicated and ordered a few hours at a time, and DuckDB's working memory (the sort of whole
 * rows) follows the slice, not the day or the export. A day is cut into 1, 2, 3, 4, 6 or 8 slices
 * by the size of its files: small days in one query (each slice re-reads the row groups it meets,
 * so slicing costs time), large ones in slices of this size. Measured on 4 days of one stream
 * (1.19 M reports, 23 MB a day, every column, written as Parquet): peak RSS added 238 MB a day at
 * a time, 170 MB with 6-hour slices, 94 MB with 3-hour ones; time 11.2 s, 8.2 s and 11.0 s.
 */
export const EXPORT_SLICE_BYTES = 4 * 2 ** 20;

/** Slices of a day: the fewest that keep each under `sliceBytes` (at most 8, of 3 hours). */
export function slicesOfDay(dayBytes: number, sliceBytes = EXPORT_SLICE_BYTES): number {
  const wanted = Math.ceil(dayBytes / sliceBytes);
  return [1, 2, 3, 4, 6, 8].find((n) => n >= wanted) ?? 8;
}

const HOUR_MS = 3_600_000;

/** One query of an export: a day's files, read for the reports with ts in [fromMs, untilMs). */
interface Slice {
  files: string[];
  present: ReadonlySet<string>;
  fromMs: number;
  untilMs: number;
}

/**
 * The export's queries, in time order: each day's files cut into slicesOfDay slices, those that
 * meet the window only.
 */
class SliceQueries {
  readonly params: SqlParams;
  private readonly slices: Slice[] = [];
  constructor(
    days: ExportDay[],
    streamId: string,
    snap: ServedSnapshot,
    window: WindowName,
    sliceBytes: number,
  ) {
    const seconds = windowSeconds(window);
    const lowerMs = seconds === null ? null : snap.asOfMs - seconds * 1000;
    this.params = {
      stream_id: streamId,
      as_of: timestampParam(new Date(snap.asOfMs)),
      lower: lowerMs === null ? null : timestampParam(new Date(lowerMs)),
    };
    for (const { day, files, bytes, present } of days) {
      const dayMs = Date.parse(`${day}T00:00:00Z`);
      const hours = 24 / slicesOfDay(bytes, sliceBytes);
      for (let h = 0; h < 24; h += hours) {
        const fromMs = dayMs + h * HOUR_MS;
        const untilMs = fromMs + hours * HOUR_MS;
        // The window is (lower, asOf]: a slice wholly before or after it holds none of its reports.
        if ((lowerMs !== null && untilMs <= lowerMs) || fromMs > snap.asOfMs) continue;
        this.slices.push({ files, present, fromMs, untilMs });
      }
    }
  }

  get count(): number {
    return this.slices.length;
  }

  sql(i: number): string {
    const { files, present } = this.slices[i]!;
    return fillSql(sqlFile('export_reports'), {
      files: fileList(files),
      projection: projectionSql(ALL_COLUMNS, present),
      provenance: provenanceSql(present),
    });
  }

  /** The bound values of slice `i`: the window's, and the slice's own time range. */
  paramsOf(i: number): SqlParams {
    const slice = this.slices[i]!;
    return { ...this.params, from: timestampParam(new Date(slice.fromMs)), until: timestampParam(new Date(slice.untilMs)) };
  }

  /** A typed empty result, for an export with no slice to read. */
  empty(): string {
    return `SELECT ${projectionSql(ALL_COLUMNS, new Set())} WHERE $stream_id IS NULL AND $as_of IS NULL AND $lower IS NULL`;
  }
}

/**
 * What one export holds: its DuckDB session and its scratch files. `release` closes and removes all
 * of them, once, whichever way the export ends (finished, failed, refused, abandoned).
 */
class ExportResources {
  private readonly files = new Set<string>();
  private released = false;
  /** A body already started (its first piece computed): ended on release, closing what it holds open. */
  pending: AsyncGenerator<Buffer> | null = null;

  constructor(
    readonly session: DbSession,
    private readonly layout: WarehouseLayout,
  ) {}

  async scratchFile(): Promise<string> {
    if (this.released) throw new Error('export already released');
    const file = await newScratchFile(this.layout);
    this.files.add(file);
    return file;
  }

  async removeFile(file: string): Promise<void> {
    this.files.delete(file);
    await fs.promises.rm(file, { force: true });
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    // A started body suspended at a yield still holds a read stream (a descriptor): end it first.
    await this.pending?.return(undefined).catch(() => {});
    this.session.close();
    const files = [...this.files];
    this.files.clear();
    await Promise.all(files.map((f) => fs.promises.rm(f, { force: true })));
  }
}

/** Stream a file DuckDB wrote, then remove it (its descriptor is closed however the loop ends). */
async function* drain(r: ExportResources, file: string): AsyncGenerator<Buffer> {
  try {
    for await (const buf of fs.createReadStream(file, { highWaterMark: 1 << 16 })) yield buf as Buffer;
  } finally {
    await r.removeFile(file);
  }
}

/** CSV or NDJSON: each slice written by DuckDB's own writer to a scratch file, then streamed. */
async function* textSlices(r: ExportResources, q: SliceQueries, format: 'csv' | 'ndjson'): AsyncGenerator<Buffer> {
  if (format === 'csv') yield Buffer.from(CSV_HEADER);
  for (let i = 0; i < q.count; i++) {
    const file = await r.scratchFile();
    const columns = format === 'csv' ? CSV_COLUMNS_SQL : NDJSON_COLUMNS_SQL;
    const options = format === 'csv' ? `FORMAT csv, HEADER false, ${IN_PLACE}` : `FORMAT json, ${IN_PLACE}`;
    await r.session.run(`COPY (SELECT ${columns} FROM (${q.sql(i)})) TO ${quotedString(file)} (${options})`, q.paramsOf(i), TYPES);
    yield* drain(r, file);
  }
}

/**
 * Arrow: each slice deduplicated and sorted by DuckDB into a scratch Parquet file (the heavy work,
 * done inside an export slot and over when the COPY ends), then that file's rows converted to
 * bounded record batches as the client takes them. Streaming the sorted query itself would keep
 * its sorted rows pinned in DuckDB's memory for as long as the client takes to download them:
 * twenty slow downloads then hold twenty sorts and DuckDB runs out of memory (seen with
 * `bench:abuse`, every export admitted). A scratch file read in order pins one row group.
 */
async function* arrowSlices(r: ExportResources, q: SliceQueries): AsyncGenerator<Buffer> {
  // Loaded on the first Arrow export: apache-arrow (~150 modules) would add to every start of `serve`.
  const { ARROW_COLUMNS_SQL, arrowStream } = await import('./arrow.ts');
  async function* chunks(): AsyncGenerator<DuckDBDataChunk> {
    const select = (sql: string) => `SELECT ${ARROW_COLUMNS_SQL} FROM (${sql})`;
    if (q.count === 0) {
      yield* r.session.chunks(select(q.empty()), q.params, TYPES);
      return;
    }
    for (let i = 0; i < q.count; i++) {
      const part = await sliceFile(r, q, i);
      try {
        yield* r.session.chunks(select(`SELECT * FROM read_parquet(${quotedString(part)})`));
      } finally {
        await r.removeFile(part);
      }
    }
  }
  yield* arrowStream(chunks());
}

/** Row groups of a slice's scratch file: what a read of one pins at a time. */
const SLICE_ROW_GROUP = 16_384;

/** Slice `i`, deduplicated and sorted, in a scratch Parquet file of the export. */
async function sliceFile(r: ExportResources, q: SliceQueries, i: number): Promise<string> {
  const part = await r.scratchFile();
  await r.session.run(
    `COPY (${q.sql(i)}) TO ${quotedString(part)} (FORMAT parquet, COMPRESSION snappy, ROW_GROUP_SIZE ${SLICE_ROW_GROUP}, ${IN_PLACE})`,
    q.paramsOf(i),
    TYPES,
  );
  return part;
}

/** Parquet needs its footer last: slices go to scratch files, which one COPY joins in order. */
async function parquetFile(r: ExportResources, q: SliceQueries): Promise<string> {
  const out = await r.scratchFile();
  if (q.count === 0) {
    await r.session.run(`COPY (${q.empty()}) TO ${quotedString(out)} (FORMAT parquet, COMPRESSION zstd, ${IN_PLACE})`, q.params, TYPES);
    return out;
  }
  const parts: string[] = [];
  for (let i = 0; i < q.count; i++) parts.push(await sliceFile(r, q, i));
  // The parts are read in list order, each already sorted: no sort, no dedup, memory flat.
  await r.session.run(`COPY (SELECT * FROM read_parquet(${fileList(parts)})) TO ${quotedString(out)} (FORMAT parquet, COMPRESSION zstd, ${IN_PLACE})`);
  for (const p of parts) await r.removeFile(p);
  return out;
}

/**
 * The response body over `body`: whichever way it ends (read to the end, failed, or destroyed
 * because the client left, even before its first read), the export's resources are released.
 */
function ownedStream(r: ExportResources, body: AsyncGenerator<Buffer>): Readable {
  async function* owned(): AsyncGenerator<Buffer> {
    try {
      yield* body;
    } finally {
      await r.release();
    }
  }
  const stream = Readable.from(owned(), { objectMode: false, highWaterMark: 1 << 16 });
  // 'close' follows the end of `owned` when it ran; when it never started, nothing else releases.
  stream.once('close', () => void r.release());
  return stream;
}

export interface ExportLimits {
  /** Aborting it (the client left) interrupts DuckDB and releases everything. */
  signal: AbortSignal;
  /** Each DuckDB call of a slice (a COPY, or a fetch of Arrow rows) is interrupted after this long. */
  dayTimeoutMs: number;
  /** Landed bytes of a day read by one query at most (slicesOfDay). */
  sliceBytes: number;
}

/**
 * Start the export and return its body. The first slice (all of it, for Parquet) is computed before
 * this resolves, so that a failure still becomes an error response rather than a cut-off download.
 * Exports run in DuckDB's export pool, so that they cannot take the slots of other routes.
 */
export async function startExport(
  db: Db,
  layout: WarehouseLayout,
  snap: ServedSnapshot,
  streamId: string,
  window: WindowName,
  format: ExportFormat,
  limits: ExportLimits,
): Promise<Readable> {
  const q = new SliceQueries(exportDays(snap, layout, streamId, window), streamId, snap, window, limits.sliceBytes);
  const s = await db.session({ pool: 'exports', signal: limits.signal, callTimeoutMs: limits.dayTimeoutMs });
  const r = new ExportResources(s, layout);
  try {
    if (format === 'parquet') {
      const file = await parquetFile(r, q);
      return ownedStream(r, drain(r, file));
    }
    const body = format === 'arrow' ? arrowSlices(r, q) : textSlices(r, q, format);
    // Compute the first piece now: errors before the headers are sent become problems.
    const first = await body.next();
    r.pending = body;
    async function* withFirst(): AsyncGenerator<Buffer> {
      if (!first.done) yield first.value;
      yield* body;
    }
    return ownedStream(r, withFirst());
  } catch (err) {
    await r.release();
    throw err;
  }
}
