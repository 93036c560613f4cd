// Combines partition states into a snapshot: stream summaries of every window, per-customer and
// platform rows, and the per-day series files, exactly as if computed from the deduplicated
// reports (docs/warehouse-state.md).
// A window (asOf - w, asOf] is assembled from pieces that lie wholly inside it: hour pieces, and
// the raw reports of an hour that an edge cuts (a report is a piece of its own). A day's series is
// its state's own file, hard-linked into the snapshot, unless the state holds reports after asOf:
// then that day is computed from its raw reports up to asOf.
import fs from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { BIGINT, LIST, TIMESTAMP, VARCHAR, listValue } from '@duckdb/node-api';
import type { DbSession } from './duckdb/session.ts';
import { timestampParam, type SqlParams, type SqlTypes } from './duckdb/param-values.ts';
import { fileList, fillSql, sqlFile } from './sql-files.ts';
import { copyToParquet, STATE_COMPRESSION, type CopyOptions } from './parquet-write.ts';
import { createEmptyTable } from './empty-relations.ts';
import { ROLLUP_COLUMNS } from './report-columns.ts';
import { projectionSql } from './report-projection.ts';
import { SERIES_ROW_GROUP_SIZE } from './partition-state.ts';
import { compactedHoursFile, seriesBlockFile, stateFiles, type StateMeta } from './state-store.ts';
import { createHash } from 'node:crypto';
import { STANDARD_BUCKET_SECONDS, WINDOWS, WINDOW_NAMES } from './windows.ts';
import type { SnapshotFiles } from './snapshots.ts';
import type { WarehouseLayout } from './layout.ts';
import { exists, fsyncDir } from '../lib/fsx.ts';

const HOUR_US = 3_600_000_000n;

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

/** The start of the `grain`-long interval whose open part (start, start + grain) strictly holds `edge`. */
function cutInterval(edge: bigint, grain: bigint): bigint | null {
  const start = edge - (((edge % grain) + grain) % grain);
  return start + 1n <= edge && edge < start + grain - 1n ? start : null;
}

export function usOf(d: Date): bigint {
  return BigInt(d.getTime()) * 1000n;
}

function dateOfUs(us: bigint): string {
  return new Date(Number(us / 1000n)).toISOString().slice(0, 10);
}

/**
 * The hours that the windows' edges at `asOf` cut: those of the four lower edges (asOf - w), and
 * asOf's own hour (`asOfHour`), which hour pieces serve whole only when no report of it lies after
 * asOf (state-combine reads its raw reports otherwise).
 */
export function windowEdges(asOf: Date) {
  const u = usOf(asOf);
  const lower = WINDOWS.filter((w) => w.seconds !== null).map((w) => u - BigInt(w.seconds!) * 1_000_000n);
  const lowerCutHours = [...new Set(lower.map((e) => cutInterval(e, HOUR_US)).filter((x): x is bigint => x !== null))];
  return { asOfUs: u, lowerCutHours, asOfHour: cutInterval(u, HOUR_US) };
}

export interface CustomerFigures {
  /** Deduplicated reports with ts <= asOf. */
  reports: number;
  streams: number;
  summaryRows: number;
  seriesRows: number;
  /** Days whose series file is the state's own (hard link), and days computed by this run. */
  seriesDaysLinked: number;
  seriesDaysWritten: number;
}

export interface CombineResult {
  customers: Map<string, CustomerFigures>;
  platformRows: number;
  /** Raw reports read because a window edge cuts an hour, or reports after asOf share its day. */
  edgeReportsRead: number;
  /** Files of the state area this combine used besides states (compacted hours, series blocks): kept by retention. */
  usedFiles: string[];
}

const PIECE_COLUMNS = 'streamId, sessionId, start_us, lo_us, reports, off, fb, peer_sum, peer_n, buf_sum, buf_n, stalls, last_ts, last_final_ts';
/** Literals of code-computed instants (never input), for filters DuckDB can push into Parquet reads. */
const lit = (xs: readonly bigint[]) => xs.map((x) => `${x}::BIGINT`).join(', ');

/** Pieces of states' files: `where` on the file's columns; lo_us added. */
function statePiecesSql(files: string[], where: string, asOfUs: bigint): string {
  return `SELECT ${PIECE_COLUMNS} FROM (
            SELECT *, start_us + CASE WHEN at_start THEN 0 ELSE 1 END AS lo_us
            FROM read_parquet(${fileList(files)}) WHERE ${where}
          ) WHERE lo_us <= ${asOfUs}::BIGINT`;
}

export async function combineStates(
  s: DbSession,
  input: {
    layout: WarehouseLayout;
    asOf: Date;
    horizonSeconds: number;
    customers: readonly string[];
    /** The state of every partition of the snapshot. */
    states: readonly StateMeta[];
    build: SnapshotFiles;
  },
): Promise<CombineResult> {
  const { layout, asOf, build } = input;
  const { asOfUs, lowerCutHours, asOfHour } = windowEdges(asOf);
  const asOfDate = dateOfUs(asOfUs);
  const states = input.states.filter((m) => m.date <= asOfDate && m.files.length > 0);
  /** States holding a report after asOf (only those of asOf's date can). */
  const after = states.filter((m) => m.maxTs !== null && Date.parse(m.maxTs) > asOf.getTime());
  const cutHours = [...lowerCutHours];
  if (asOfHour !== null && after.some((m) => m.date === dateOfUs(asOfHour))) cutHours.push(asOfHour);
  const emptyReports = `(SELECT ${projectionSql(ROLLUP_COLUMNS, new Set())} WHERE false)`;
  const reportPieces = (source: string) => fillSql(sqlFile('report_pieces'), { source });

  // The pieces of the windows, read where they lie by the summaries' one statement (a view, not
  // a copy): (1) and (2) below.
  const sources: string[] = [];
  const usedFiles: string[] = [];
  // 1. Hour pieces wholly inside every window they touch: each customer's older days from one
  //    compacted file (reused while those days' states are the same), the recent days from theirs.
  //    Hours after asOf's are left out by lo_us; asOf's own hour is whole unless cut (above).
  if (states.length > 0) {
    const notCut = cutHours.length > 0 ? `NOT (NOT at_start AND start_us IN (${lit(cutHours)}))` : 'true';
    const hourFiles = await compactedHours(s, layout, states, asOfDate);
    usedFiles.push(...hourFiles);
    sources.push(statePiecesSql(hourFiles, notCut, asOfUs));
  }
  // 2. The hours an edge cuts (the hour's first instant is in its hour piece), from the raw reports
  //    of their partitions' files, deduplicated by the one rule (all copies of a report share its
  //    ts, hence its partition): each report is a piece of its own, classed by its ts. A state's
  //    reports of an hour never change, so they are kept beside the state the first time an edge
  //    cuts that hour (an edge stays in an hour for an hour of 5-minute runs), and read from there.
  let edgeReportsRead = 0;
  const cutPairs = states.flatMap((m) =>
    cutHours.filter((h) => dateOfUs(h) === m.date).map((h) => ({ m, h, file: stateFiles(layout, m).edgeHour(h) })),
  );
  const missing: typeof cutPairs = [];
  for (const p of cutPairs) if (!(await exists(p.file))) missing.push(p);
  if (missing.length > 0) {
    const hours = [...new Set(missing.map((p) => p.h))];
    const inHours = hours.map((h) => `(ts > make_timestamp(${h}::BIGINT) AND ts < make_timestamp(${h + HOUR_US}::BIGINT))`).join(' OR ');
    edgeReportsRead += await loadDedupedRaw(s, layout, [...new Set(missing.map((p) => p.m))], inHours);
    await s.run(
      `CREATE OR REPLACE TEMP TABLE edge_reports AS SELECT split_part(streamId, ':', 1) AS customer, * FROM (${reportPieces('reports')});
       DROP TABLE raw_reports; DROP TABLE reports;`,
    );
    for (const p of missing) {
      await copyToParquet(
        s,
        `SELECT ${PIECE_COLUMNS} FROM edge_reports WHERE customer = $customer AND start_us > ${p.h}::BIGINT AND start_us < ${p.h + HOUR_US}::BIGINT`,
        p.file,
        { customer: p.m.customerId },
        { customer: VARCHAR },
        { compression: STATE_COMPRESSION },
      );
    }
    await s.run(`DROP TABLE edge_reports`);
  }
  if (cutPairs.length > 0) {
    sources.push(`SELECT ${PIECE_COLUMNS} FROM read_parquet(${fileList(cutPairs.map((p) => p.file))}) WHERE lo_us <= ${asOfUs}::BIGINT`);
  }
  sources.push(`SELECT ${PIECE_COLUMNS} FROM (${reportPieces(emptyReports)})`);
  await s.run(`CREATE OR REPLACE TEMP VIEW window_pieces AS ${sources.join('\nUNION ALL\n')}`);

  // Stream summaries of every window, then per-customer and platform rows.
  const { params, types } = summaryParams(asOf, input.horizonSeconds);
  await s.run(
    `CREATE OR REPLACE TEMP TABLE summaries AS
     SELECT *, split_part(streamId, ':', 1) AS customer FROM (${fillSql(sqlFile('stream_summaries'), { pieces: 'window_pieces' })})`,
    params,
    types,
  );
  const customers = new Map<string, CustomerFigures>();
  const counts = await s.all<{ customer: string; reports: number; streams: number }>(
    `SELECT customer, sum(reports) AS reports, count(*) AS streams FROM summaries WHERE windowName = 'all' GROUP BY customer`,
  );
  for (const c of input.customers) {
    const row = counts.find((r) => r.customer === c);
    const summaryRows = await copyToParquet(
      s,
      `SELECT * EXCLUDE (customer) FROM summaries WHERE customer = $customer ORDER BY windowName, streamId`,
      build.summaries(c),
      { customer: c },
    );
    customers.set(c, {
      reports: row?.reports ?? 0,
      streams: row?.streams ?? 0,
      summaryRows,
      seriesRows: 0,
      seriesDaysLinked: 0,
      seriesDaysWritten: 0,
    });
  }
  await s.run(
    `CREATE OR REPLACE TEMP TABLE added_up AS ${fillSql(sqlFile('platform_summaries'), { summaries: 'summaries' })}`,
    { window_names: listValue([...WINDOW_NAMES]) },
    { window_names: LIST(VARCHAR) },
  );
  const platformRows = await copyToParquet(s, `SELECT * EXCLUDE (customer) FROM added_up WHERE customer IS NULL`, build.platform);
  await copyToParquet(s, `SELECT * FROM added_up WHERE customer IS NOT NULL ORDER BY customer, windowName`, build.customers);

  // Series: a day's series is its state's own file when every report of the state is at or
  // before asOf (every complete day, and the day of asOf in the usual case); otherwise (a state
  // holding reports after asOf) it is computed from the state's raw reports up to asOf.
  const withSeries = new Set<string>();
  const afterIds = new Set(after.map((m) => m.stateId));
  const whole = states.filter((m) => !afterIds.has(m.stateId));
  // Past days are read through blocks of many days (a read of a long window opens a few files,
  // not one per day); the others are their state's own file.
  const { blocks, singles } = planSeriesBlocks(whole, asOfDate);
  const placed: { from: string; to: string }[] = singles.map((m) => ({ from: stateFiles(layout, m).series, to: build.seriesDay(m.customerId, m.date) }));
  for (const b of blocks) {
    const file = await seriesBlock(s, layout, b);
    usedFiles.push(file);
    placed.push({ from: file, to: build.seriesDays(b.customerId, b.first, b.last) });
  }
  // Links and folders in parallel: each is a small metadata operation, and fsyncs of one file
  // system overlap into few journal commits.
  const limit = pLimit(16);
  await Promise.all(
    placed.map(({ from, to }) =>
      limit(async () => {
        await fs.mkdir(path.dirname(to), { recursive: true });
        await linkOrCopy(from, to);
      }),
    ),
  );
  for (const m of whole) {
    const f = customers.get(m.customerId);
    if (f) {
      f.seriesRows += m.seriesRows;
      f.seriesDaysLinked++;
    }
    withSeries.add(m.customerId);
  }
  const dirs = new Set(placed.map((p) => path.dirname(p.to)));
  await createEmptyTable(s, 'partial_pieces', reportPieces(emptyReports));
  if (after.length > 0) {
    edgeReportsRead += await loadDedupedRaw(s, layout, after, `ts <= make_timestamp(${asOfUs}::BIGINT)`);
    await s.run(`INSERT INTO partial_pieces BY NAME ${reportPieces('reports')}`);
    await s.run(`DROP TABLE raw_reports; DROP TABLE reports`);
  }
  const seriesPieces = `(SELECT streamId, sessionId, start_us, reports, off, fb, peer_sum, peer_n, buf_sum, buf_n, stalls FROM partial_pieces)`;
  const seriesSql = fillSql(sqlFile('series_combine'), { pieces: seriesPieces });
  await createEmptyTable(s, 'partial_series', seriesSql, { bucket_seconds: 60 });
  if (after.length > 0) {
    for (const size of STANDARD_BUCKET_SECONDS) await s.run(`INSERT INTO partial_series ${seriesSql}`, { bucket_seconds: size });
  }
  for (const c of input.customers) {
    const onPartialDay = after.some((m) => m.customerId === c);
    // Every customer of the snapshot has at least one series file (an empty one when it has no
    // bucket yet), so that readers' globs always match.
    if (!onPartialDay && withSeries.has(c)) continue;
    const target = build.seriesDay(c, asOfDate);
    const rows = await copyToParquet(
      s,
      `SELECT * FROM partial_series WHERE split_part(streamId, ':', 1) = $customer ORDER BY streamId, bucketSeconds, bucketStart`,
      target,
      { customer: c },
      undefined,
      { rowGroupSize: SERIES_ROW_GROUP_SIZE },
    );
    const f = customers.get(c)!;
    f.seriesRows += rows;
    f.seriesDaysWritten++;
  }
  await Promise.all([...dirs].map((d) => limit(() => fsyncDir(d))));
  await s.run(
    `DROP VIEW IF EXISTS window_pieces; DROP TABLE IF EXISTS edge_reports; DROP TABLE IF EXISTS summaries;
     DROP TABLE IF EXISTS added_up; DROP TABLE IF EXISTS partial_pieces; DROP TABLE IF EXISTS partial_series;`,
  );
  return { customers, platformRows, edgeReportsRead, usedFiles };
}

/**
 * The deduplicated reports of `states`' own input files that match `where` (a filter built by code
 * from constants), as `reports` (and `raw_reports`, the rows read); returns the rows read.
 */
async function loadDedupedRaw(s: DbSession, layout: WarehouseLayout, states: readonly StateMeta[], where: string): Promise<number> {
  const files = states.flatMap((m) => m.files.map((f) => path.join(layout.rawReports, f.path)));
  const present = new Set(states.flatMap((m) => m.presentColumns));
  await s.run(
    fillSql(sqlFile('load_raw'), { kind: 'TABLE', files: fileList(files), projection: projectionSql(ROLLUP_COLUMNS, present), where }),
  );
  await s.run(sqlFile('dedup_raw'), { as_of: null }, { as_of: TIMESTAMP });
  return (await s.one<{ n: number }>(`SELECT count(*) AS n FROM raw_reports`)).n;
}

/** Days this recent are read from their own states; older ones from a customer's compacted file. */
const RECENT_DAYS = 2;

/** UTC dates as days since the epoch, and back. */
const DAY_MS = 86_400_000;
const epochDay = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
const dateOfDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

/**
 * The hour-piece files to read for `states`: per customer, one compacted file of the hour pieces
 * of its days older than RECENT_DAYS before asOf's date, named by a hash of exactly which states
 * it holds (so a file of that name is always right, and any change of those states names another
 * file), plus the recent days' own files. A run then opens a few files per customer instead of
 * one per day of history; a late file into an old day rebuilds its customer's compacted file.
 */
async function compactedHours(s: DbSession, layout: WarehouseLayout, states: readonly StateMeta[], asOfDate: string): Promise<string[]> {
  const cutoff = dateOfDay(epochDay(asOfDate) - RECENT_DAYS);
  const out: string[] = [];
  const byCustomer = new Map<string, StateMeta[]>();
  for (const m of states) {
    if (m.date >= cutoff) out.push(stateFiles(layout, m).hours);
    else byCustomer.set(m.customerId, [...(byCustomer.get(m.customerId) ?? []), m]);
  }
  for (const [customerId, list] of byCustomer) {
    if (list.length === 1) {
      out.push(stateFiles(layout, list[0]!).hours);
      continue;
    }
    const file = compactedHoursFile(layout, customerId, statesKey(list));
    out.push(await compactedFile(s, file, `SELECT * FROM read_parquet(${fileList(list.map((m) => stateFiles(layout, m).hours))})`, { compression: STATE_COMPRESSION }));
  }
  return out;
}

/** A hash of exactly which states a compacted file holds (and of `version`, when its layout has one). */
function statesKey(states: readonly StateMeta[], version: string[] = []): string {
  return createHash('sha256')
    .update([...version, ...states.map((m) => `${m.date}/${m.stateId}`).sort()].join('\n'))
    .digest('hex')
    .slice(0, 24);
}

/**
 * A compacted file of the state area, named by statesKey (so a file of that name is always
 * right): written from `query` the first time a run needs it, and touched on every use, so that
 * retention keeps the files runs still use.
 */
async function compactedFile(s: DbSession, file: string, query: string, options: CopyOptions): Promise<string> {
  if (!(await exists(file))) await copyToParquet(s, query, file, undefined, undefined, options);
  const now = new Date();
  await fs.utimes(file, now, now).catch(() => {});
  return file;
}

/**
 * Spans of past days whose series are read as one file, largest first: 64 days, then 8, aligned on
 * days since the epoch so that a span is the same from run to run. A 30-day window then opens a
 * few files instead of 30 (measured in docs/warehouse-state.md, "Series blocks").
 */
export const SERIES_BLOCK_DAYS = [64, 8] as const;
/** Bumped when the layout of a block file changes: its name changes with it. */
const SERIES_BLOCK_VERSION = 2;

export interface SeriesBlock {
  customerId: string;
  first: string;
  last: string;
  /** The states of the block's days that have reports (at least two), by date. */
  states: StateMeta[];
}

/**
 * Which days of `whole` (states with no report after asOf) are read through blocks: a span is a
 * block when it ends before asOf's date (no day of it can still change but by a late file, which
 * changes its states and so the block's name) and at least two of its days have a state. The
 * complete days of the span that holds asOf's date (two or more with a state, before asOf's day)
 * are one more block, from the first to the last of them: rebuilt once a day, when another day completes (at
 * most SERIES_BLOCK_DAYS' smallest span of one customer's series), so that a 7-day or 30-day read
 * opens a few files rather than up to seven days on their own. The rest (asOf's own day, a lone
 * day) are read day by day.
 */
export function planSeriesBlocks(whole: readonly StateMeta[], asOfDate: string): { blocks: SeriesBlock[]; singles: StateMeta[] } {
  const asOfDay = epochDay(asOfDate);
  let rest = [...whole];
  const blocks: SeriesBlock[] = [];
  for (const span of SERIES_BLOCK_DAYS) {
    const groups = new Map<string, { start: number; list: StateMeta[] }>();
    const keep: StateMeta[] = [];
    for (const m of rest) {
      const start = Math.floor(epochDay(m.date) / span) * span;
      if (start + span - 1 >= asOfDay) {
        keep.push(m);
        continue;
      }
      const key = `${m.customerId}|${start}`;
      const group = groups.get(key);
      if (group) group.list.push(m);
      else groups.set(key, { start, list: [m] });
    }
    for (const { start, list } of groups.values()) {
      if (list.length < 2) {
        keep.push(...list);
        continue;
      }
      blocks.push({ customerId: list[0]!.customerId, first: dateOfDay(start), last: dateOfDay(start + span - 1), states: list.sort((a, b) => (a.date < b.date ? -1 : 1)) });
    }
    rest = keep;
  }
  // The complete days of the span that holds asOf's date.
  const span = Math.min(...SERIES_BLOCK_DAYS);
  const current = Math.floor(asOfDay / span) * span;
  const partial = new Map<string, StateMeta[]>();
  const singles: StateMeta[] = [];
  for (const m of rest) {
    const day = epochDay(m.date);
    if (day >= current && day < asOfDay) partial.set(m.customerId, [...(partial.get(m.customerId) ?? []), m]);
    else singles.push(m);
  }
  for (const list of partial.values()) {
    if (list.length < 2) {
      singles.push(...list);
      continue;
    }
    list.sort((a, b) => (a.date < b.date ? -1 : 1));
    blocks.push({ customerId: list[0]!.customerId, first: list[0]!.date, last: list.at(-1)!.date, states: list });
  }
  return { blocks, singles };
}

/**
 * The block's file in the state area (compactedFile): the series of its days, sorted by stream,
 * size and time like a day's.
 */
function seriesBlock(s: DbSession, layout: WarehouseLayout, b: SeriesBlock): Promise<string> {
  const file = seriesBlockFile(layout, b.customerId, b.first, b.last, statesKey(b.states, [`v${SERIES_BLOCK_VERSION}`]));
  // hive_partitioning off: the state folders' customer= and date= are not columns of a series.
  const query = `SELECT * FROM read_parquet(${fileList(b.states.map((m) => stateFiles(layout, m).series))}, hive_partitioning = false) ORDER BY streamId, bucketSeconds, bucketStart`;
  return compactedFile(s, file, query, { compression: STATE_COMPRESSION, rowGroupSize: SERIES_ROW_GROUP_SIZE });
}

/** A hard link (the snapshot shares the state's immutable file), or a copy across file systems. */
async function linkOrCopy(from: string, to: string): Promise<void> {
  await fs.rm(to, { force: true });
  try {
    await fs.link(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await fs.copyFile(from, to);
  }
}
