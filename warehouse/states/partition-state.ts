// Builds the states of a batch of (customer, date) partitions: check their files (all of the
// batch at once, each against the partition folder it lies in), deduplicate (every copy of a
// report has the same ts, hence the same partition), reduce to per-hour pieces of partial sums and
// each day's series, and write one immutable state per partition (state-store.ts).
// The files are read twice, both times straight from Parquet and only the columns needed: once
// for the deduplication rule (reportId, file and row), once into minute pieces; nothing the size
// of the reports is materialised. A batch holds many partitions so that a run's fixed costs
// (statements, file writes, fsyncs) are paid once per batch, not once per partition.
import { fileList, fillSql, quotedString, sqlFile, withBucketSeconds } from '../duckdb/index.ts';
import { STATE_COMPRESSION } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import type { LandedFile } from '../landing/index.ts';
import { loadSql, readScreened, type LoadContext, type LoadOutcome } from '../landing/index.ts';
import { pieceSql } from '../figures/index.ts';
import { STATE_COLUMNS } from '../session-reports/index.ts';
import { newStateId, partitionKey, stateInput, stateLayout, stateVersion, writeStates, type stateFiles, type StateMeta, type StateToWrite } from './state-store.ts';
import { dropRelations } from '../duckdb/index.ts';
import { MIN_BUCKET_SECONDS, STANDARD_BUCKET_SECONDS } from '../figures/index.ts';
import { codeVersion } from '../../lib/version.ts';

/** Series files are read one stream at a time: row groups small enough for min/max pruning. */
export const SERIES_ROW_GROUP_SIZE = 8192;

/** A partition to build: its customer and date. */
export interface PartitionToBuild {
  customerId: string;
  date: string;
}

/** The session's relations of a batch build, dropped when it ends (whichever step it ended at). */
const BATCH_RELATIONS = [
  'reports', 'raw_reports', 'dedup_dropped', 'state_minutes', 'state_hours', 'state_series', 'series_rows',
  ...STANDARD_BUCKET_SECONDS.map((size) => `session_buckets_${size}`),
];

export async function buildPartitionStates(
  ctx: LoadContext,
  /** The partitions to build; each gets a state, empty when all its files were quarantined. */
  partitions: readonly PartitionToBuild[],
  /** The landed files of those partitions. */
  landed: readonly LandedFile[],
): Promise<StateMeta[]> {
  const started = Date.now();
  try {
    const load = await readPieces(ctx, landed);
    await buildSeries(ctx.s);
    const figures = await partitionFigures(ctx.s, load.files);
    const states = partitions.map((p) => stateToWrite(ctx, p, { landed, load, figures, started }));
    await writeStates(ctx.layout, states);
    return states.map((w) => w.meta);
  } finally {
    await dropRelations(ctx.s, BATCH_RELATIONS);
  }
}

/**
 * The batch's files checked (schemas, then every row rule, validate-rows.ts), each against the
 * partition folder it lies in (rows of another customer or date are a fault of the file), then
 * deduplicated and reduced to minute and hour pieces, read where they lie (readScreened: a file
 * whose pages are broken is quarantined and the batch read again). Returns the files the pieces hold.
 */
async function readPieces(ctx: LoadContext, landed: readonly LandedFile[]): Promise<LoadOutcome> {
  return (await readScreened(ctx, landed, (load) => piecesFrom(ctx.s, load.files, new Set(load.presentColumns)))).load;
}

/**
 * `state_hours` (state_pieces.sql) and `state_minutes` (state_minutes.sql) from `files`,
 * deduplicated by the one rule (dedup_batch.sql). No file: empty tables.
 */
async function piecesFrom(s: DbSession, files: readonly LandedFile[], present: ReadonlySet<string>): Promise<void> {
  await s.run(loadSql(files, present, STATE_COLUMNS, 'VIEW'));
  await s.run(sqlFile('dedup_batch'));
  await s.run(pieceSql('state_pieces'));
  await s.run(pieceSql('state_minutes', { minute_session: await minuteSessionKey(s) }));
}

/**
 * The minute pieces' session key: a 64-bit hash of (stream, session) when it is distinct for
 * every session of the batch's hour pieces (session_keys_exact.sql), else the session id itself.
 * Both group the same reports together, so the series made of them are the same.
 */
async function minuteSessionKey(s: DbSession): Promise<string> {
  const [row] = await s.all<{ exact: boolean }>(sqlFile('session_keys_exact'));
  return row?.exact === true ? HASHED_SESSION : 'sessionId';
}

/** The minute pieces' session key where the hash tells every session of the batch apart. */
export const HASHED_SESSION = 'hash(streamId, sessionId) AS sessionId';

/**
 * Each day's series of every standard size (or of those up to `upTo` seconds), as `state_series`
 * (state_series.sql), from the minute pieces (the 60 s session buckets), in three statements: the
 * 60 s series; the next size's session buckets (coarser_buckets.sql), after which the minute
 * pieces, the largest relation, are dropped; then every larger size at once (series_rows.sql),
 * each from the buckets of the one before it.
 */
export async function buildSeries(s: DbSession, upTo: number = Infinity): Promise<void> {
  const sizes = [...STANDARD_BUCKET_SECONDS].filter((size) => size <= upTo).sort((a, b) => a - b);
  const [minute, next, ...larger] = sizes;
  if (minute !== MIN_BUCKET_SECONDS) throw new Error(`the series start at ${MIN_BUCKET_SECONDS} s`);
  await s.run(`CREATE OR REPLACE TEMP TABLE series_rows AS\n${seriesRowsSql('state_minutes', [minute])}`);
  if (next === undefined) {
    await dropRelations(s, ['state_minutes']);
  } else {
    await s.run(pieceSql('coarser_buckets', { buckets: bucketsOf(next), pieces: 'state_minutes' }), { bucket_seconds: next });
    await dropRelations(s, ['state_minutes']);
    await s.run(`INSERT INTO series_rows\n${seriesRowsSql(bucketsOf(next), [next, ...larger])}`);
    await dropRelations(s, [bucketsOf(next)]);
  }
  await s.run(sqlFile('state_series'));
}

const bucketsOf = (size: number) => `session_buckets_${size}`;

/** series_rows.sql for `sizes`, the first read from `first` (its session buckets), each next from the one before. */
function seriesRowsSql(first: string, sizes: readonly number[]): string {
  const table = (i: number) => (i === 0 ? first : bucketsOf(sizes[i]!));
  const tables = sizes
    .slice(1)
    .map((size, i) => `${table(i + 1)} AS MATERIALIZED (\n${withBucketSeconds(pieceSql('session_buckets', { pieces: table(i) }), size)}\n)`);
  const series = sizes.map((size, i) => `SELECT * FROM (\n${withBucketSeconds(pieceSql('series_from_buckets', { buckets: table(i) }), size)}\n)`);
  return fillSql(sqlFile('series_rows'), { size_buckets: tables.length > 0 ? `WITH ${tables.join(',\n')}` : '', size_series: series.join('\nUNION ALL\n') });
}

/** What a partition's state records of the batch's pieces and files. */
interface PartitionFigures {
  rowsRead: number;
  reports: number;
  streams: number;
  maxTs: string | null;
  hourRows: number;
}

const NO_FIGURES: PartitionFigures = { rowsRead: 0, reports: 0, streams: 0, maxTs: null, hourRows: 0 };

/** The figures of each partition of the batch (partition_figures.sql, files_read.sql), by partition key. */
async function partitionFigures(s: DbSession, files: readonly LandedFile[]): Promise<Map<string, PartitionFigures>> {
  const out = new Map<string, PartitionFigures>();
  const rows = await s.all<{ customer: string; date: string; n: number; streams: number; max_ts: string | null; hours: number }>(sqlFile('partition_figures'));
  for (const r of rows) {
    out.set(partitionKey(r.customer, r.date), { ...NO_FIGURES, reports: r.n, streams: r.streams, maxTs: r.max_ts, hourRows: r.hours });
  }
  if (files.length === 0) return out;
  const fileOf = new Map(files.map((f) => [f.path, f]));
  for (const r of await s.all<{ filename: string; n: number }>(fillSql(sqlFile('files_read'), { files: fileList(files.map((f) => f.path)) }))) {
    const f = fileOf.get(r.filename);
    if (!f) continue;
    const key = partitionKey(f.customerId, f.date);
    const figures = out.get(key) ?? { ...NO_FIGURES };
    figures.rowsRead += r.n;
    out.set(key, figures);
  }
  return out;
}

/**
 * A partition's state: its meta, and the writer of its hour pieces and its day's series, each a
 * contiguous run of the batch's sorted tables.
 */
function stateToWrite(
  ctx: LoadContext,
  { customerId, date }: PartitionToBuild,
  batch: { landed: readonly LandedFile[]; load: LoadOutcome; figures: ReadonlyMap<string, PartitionFigures>; started: number },
): StateToWrite {
  const inPartition = (f: LandedFile) => f.customerId === customerId && f.date === date;
  const files = batch.load.files.filter(inPartition);
  const all = batch.landed.filter(inPartition);
  const k = batch.figures.get(partitionKey(customerId, date)) ?? NO_FIGURES;
  const meta: StateMeta = {
    formatVersion: 1,
    stateId: newStateId(),
    stateVersion: stateVersion(),
    stateLayout: stateLayout(),
    codeVersion: codeVersion(),
    customerId,
    date,
    runId: ctx.runId,
    builtAt: new Date().toISOString(),
    files: files.map((f) => stateInput(f, batch.load.schemaOf(f))),
    presentColumns: batch.load.presentColumnsOf(files),
    quarantined: batch.load.quarantined.filter((q) => all.some((f) => f.relPath === q.relPath)),
    rowsRead: k.rowsRead,
    reports: k.reports,
    duplicatesDropped: k.rowsRead - k.reports,
    streams: k.streams,
    maxTs: k.maxTs,
    hourRows: k.hourRows,
    seriesRows: 0,
    buildMs: 0,
  };
  return {
    meta,
    write: async (out) => {
      meta.seriesRows = await writePartitionFiles(ctx.s, meta, out);
      meta.buildMs = Date.now() - batch.started;
    },
  };
}

/** The partition's hour pieces and series into its state's files (partition_rows.sql); returns the series rows. */
async function writePartitionFiles(s: DbSession, p: PartitionToBuild, out: ReturnType<typeof stateFiles>): Promise<number> {
  const copy = (table: string, file: string, rowGroupSize: string) =>
    s.run(
      fillSql(sqlFile('partition_rows'), {
        table,
        customer: quotedString(p.customerId),
        date: quotedString(p.date),
        file: quotedString(file),
        compression: STATE_COMPRESSION,
        row_group_size: rowGroupSize,
      }),
    );
  await copy('state_hours', out.hours, '');
  return copy('state_series', out.series, `, ROW_GROUP_SIZE ${SERIES_ROW_GROUP_SIZE}`);
}
