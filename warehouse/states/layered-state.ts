// Layered partition states, for recent days (docs/warehouse-state.md, "Layered states"): a file
// that lands into today's partition adds a layer to its state instead of a rebuild from every
// file of the day, so that a tick costs what is new, not what the day holds.
// A layer holds the reports of the files that landed since the previous build, deduplicated among
// themselves and against the earlier layers by the one rule, as report pieces sorted by ts (what
// window edges and asOf cuts are read from), hour pieces and minute pieces. The state's series
// is made from every layer's minute pieces. Small trailing layers are merged into the new one,
// larger ones by compaction in the background (layer-merge.ts): sizes at least double going back,
// so a day holds a few layers, not one per tick.
// The state is rebuilt from its files (one layer) when it cannot be appended to: no layered
// state yet, other state code, a file changed or removed (other than by compaction of files the
// state has read), or a new copy of a report that the rule would keep instead of an earlier one.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileList, fillSql, quotedString, sqlFile, withBucketSeconds } from '../duckdb/index.ts';
import { STANDARD_BUCKET_SECONDS } from '../figures/index.ts';
import { exists } from '../../lib/fsx.ts';
import { testInlineMergeMaxReports, testTouchedMinutesMaxRows } from '../../lib/config.ts';
import { timestampLiteral } from './window-pieces.ts';
import { STATE_COMPRESSION } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { checkSchemas, type LandedFile, type SchemaVerdict } from '../landing/index.ts';
import { fileSchema, loadSql, readScreened, type LoadContext, type LoadOutcome } from '../landing/index.ts';
import { pieceSql } from '../figures/index.ts';
import { STATE_COLUMNS } from '../session-reports/index.ts';
import { buildSeries, SERIES_ROW_GROUP_SIZE, type PartitionToBuild } from './partition-state.ts';
import { hasSlots, newStateId, SLOT_US, stateFiles, stateInput, stateLayout, stateVersion, writeStates, type LayerMeta, type StateInput, type StateMeta } from './state-store.ts';
import { dropRelations } from '../duckdb/index.ts';
import { partitionFolder, type RecordsByPartition } from '../landing/index.ts';
import { codeVersion } from '../../lib/version.ts';

/** Report files are read by ts range (window edges, asOf's minute): row groups small enough to skip. */
const REPORT_ROW_GROUP_SIZE = 16_384;

/** Slot files are read by slot (the cut hour's other slots): row groups small enough to skip. */
const SLOT_ROW_GROUP_SIZE = 16_384;

/** A layer is merged into a newer one while it holds at most this many times the newer reports. */
const MERGE_RATIO = 2;

/**
 * Layers larger than this are never merged again (a merge costs what it rewrites): the background
 * merge's default, LAYER_MERGE_MAX_REPORTS. A merge holds no table of its reports
 * (writeMergedLayerFiles: each file one statement, or one a part of the day, its sort or grouping
 * spilled past DuckDB's limit), so the bound is the time of one merge, not memory: up to it, a day's layer sizes double
 * going back, about log2(day / 65,536) layers; past it a day of N reports adds N / 16 M more.
 * Until 2026-11-29 a merge loaded its reports into a table, and the bound was 1 M (`start`: 250,000):
 * a day at 5,000 reports/s then kept ~60 layers after 20 minutes, and every run read them all.
 */
export const MAX_MERGED_LAYER_REPORTS = 16_000_000;

/**
 * A build merges trailing layers into its new one only while they hold this many reports
 * together: larger merges are the background merge's (layer-merge.ts, with compaction), so that a
 * run's cost never jumps by a rewrite of a large layer.
 */
export const INLINE_MERGE_MAX_REPORTS = 65_536;

/** INLINE_MERGE_MAX_REPORTS, or a test's own (lib/config.ts, testInlineMergeMaxReports). */
export function inlineMergeMaxReports(): number {
  return testInlineMergeMaxReports() ?? INLINE_MERGE_MAX_REPORTS;
}

/** Whether a partition's state is layered: its date is asOf's or the day before (late reports of yesterday keep landing after midnight). */
export function isLayeredDate(date: string, asOf: Date): boolean {
  return date >= new Date(asOf.getTime() - 86_400_000).toISOString().slice(0, 10);
}

const RELATIONS = ['touched_blocks', 'touched_sessions', 'touched_coarse', 'layer_sessions', 'coarse_sums', 'coarse_rows', 'state_series_all', 'pending_rows', 'raw_reports', 'reports', 'dedup_dropped', 'layer_rows', 'layer_prior', 'layer_hours', 'layer_minutes', 'layer_slots', 'state_minutes', 'state_series', 'series_rows'];

/** What the build starts from: the previous state's layers to keep, and the files new to it. */
interface AppendBase {
  prev: StateMeta | null;
  /** Files not yet read by `prev` (all of the partition's files when `prev` is null). */
  fresh: LandedFile[];
  /** Why the state is built whole (null: appended). */
  wholeBecause: string | null;
}

/**
 * The state of a recent partition from its files `landed` (every file of the partition now) and
 * its newest state `prev`: a new layer on top of `prev` when it can be appended to, else a state
 * of one layer built from every file.
 */
export async function buildLayeredState(
  ctx: LoadContext,
  p: PartitionToBuild,
  landed: readonly LandedFile[],
  prev: StateMeta | null,
  records: RecordsByPartition,
  /** The run's asOf: reports after it are held back from the layers until a run reaches them. */
  asOf: Date,
): Promise<StateMeta> {
  const started = Date.now();
  const base = appendBase(p, landed, prev, records);
  try {
    const built = await buildOn(ctx, p, base, landed, asOf, started);
    if (built) return built;
    ctx.log.info({ partition: `${p.customerId}/${p.date}` }, 'a new copy of a report outranks an earlier layer\'s: building the state whole');
    await dropRelations(ctx.s, RELATIONS);
    return (await buildOn(ctx, p, { prev: null, fresh: [...landed], wholeBecause: 'copy outranks' }, landed, asOf, started))!;
  } finally {
    await dropRelations(ctx.s, RELATIONS);
  }
}

/** Whether `prev` can be appended to, and with which files. */
function appendBase(p: PartitionToBuild, landed: readonly LandedFile[], prev: StateMeta | null, records: RecordsByPartition): AppendBase {
  const whole = (why: string): AppendBase => ({ prev: null, fresh: [...landed], wholeBecause: why });
  if (!prev || !prev.layers) return whole('no layered state');
  if (prev.stateVersion !== stateVersion()) return whole('state code changed');
  const key = (f: { path: string; size: number; mtimeMs: number }) => `${f.path}\n${f.size}\n${f.mtimeMs}`;
  const had = new Set(prev.files.map(key));
  const known = new Set([...had, ...prev.quarantined.map((q) => q.relPath)]);
  const now = landed.map((f) => ({ f, input: stateInput(f) }));
  const nowKeys = new Set(now.map(({ input }) => key(input)));
  const removed = prev.files.filter((f) => !nowKeys.has(key(f)));
  const added = now.filter(({ input }) => !had.has(key(input)) && !known.has(input.path));
  if (removed.length === 0) return { prev, fresh: added.map(({ f }) => f), wholeBecause: null };
  // Files the state read, now covered by a compacted file that holds only files it read: the
  // compacted file brings nothing new (the same rows, ranked where they first landed).
  const folder = partitionFolder(p.customerId, p.date);
  const byName = new Map(prev.files.map((f) => [path.basename(f.path), f]));
  const absorbed = new Set<string>();
  const coveredNow = new Set<string>();
  for (const r of records.get(folder) ?? []) {
    const compacted = `${folder}/${r.compacted}`;
    if (!added.some(({ input }) => input.path === compacted)) continue;
    const readAll = r.covers.every((c) => {
      const f = byName.get(c.name);
      return f !== undefined && f.size === c.size && f.mtimeMs === c.mtimeMs;
    });
    if (!readAll) return whole('a compacted file holds files the state has not read');
    absorbed.add(compacted);
    for (const c of r.covers) coveredNow.add(c.name);
  }
  if (removed.some((f) => !coveredNow.has(path.basename(f.path)))) return whole('files removed or changed');
  return { prev, fresh: added.filter(({ input }) => !absorbed.has(input.path)).map(({ f }) => f), wholeBecause: null };
}

/** The state on `base`; null when a new copy outranks an earlier layer's (then built whole). */
async function buildOn(
  ctx: LoadContext,
  p: PartitionToBuild,
  base: AppendBase,
  landed: readonly LandedFile[],
  asOf: Date,
  started: number,
): Promise<StateMeta | null> {
  const { s, layout } = ctx;
  const load = await readNewReports(ctx, base.fresh);
  const prevFiles = base.prev ? stateFiles(layout, base.prev) : null;
  const prior = base.prev?.layers ?? [];
  // The reports the previous state held back count as earlier copies too, then join the new ones.
  const heldFile = base.prev?.pending && prevFiles ? prevFiles.pending : null;
  const priorFiles = prevFiles ? [...prior.map((l) => prevFiles.layer(l.layerId).reports), ...(heldFile ? [heldFile] : [])] : [];
  const span = await s.one<{ lo: bigint | number | null; hi: bigint | number | null }>(
    `SELECT min(epoch_us(ts)) // ${HOUR_US} * ${HOUR_US} AS lo, max(epoch_us(ts)) // ${HOUR_US} * ${HOUR_US} + ${HOUR_US} AS hi FROM layer_rows`,
  );
  if (priorFiles.length > 0 && span.lo !== null && span.hi !== null) {
    const bounds = { lo: timestampLiteral(BigInt(span.lo)), hi: timestampLiteral(BigInt(span.hi)) };
    const [copies] = await s.all<{ copies: number; outranking: number }>(pieceSql('layer_prior_copies', { prior: fileList(priorFiles), ...bounds }));
    if (copies && copies.outranking > 0) return null;
    if (copies && copies.copies > 0) await s.run('DELETE FROM layer_rows WHERE reportId IN (SELECT reportId FROM layer_prior)');
  }
  if (heldFile) await s.run(`INSERT INTO layer_rows SELECT * FROM read_parquet(${quotedString(heldFile)}, hive_partitioning = false)`);
  // Reports after asOf (clocks running ahead) are held back: the layers, the hour pieces and the
  // day's series then hold nothing after asOf, and a snapshot at asOf uses them whole.
  const asOfLiteral = `make_timestamp(${BigInt(asOf.getTime()) * 1000n}::BIGINT)`;
  await s.run(`CREATE OR REPLACE TEMP TABLE pending_rows AS SELECT * FROM layer_rows WHERE ts > ${asOfLiteral}`);
  await s.run(`DELETE FROM layer_rows WHERE ts > ${asOfLiteral}`);
  const held = await s.one<{ n: number; min_ts: string | null }>(`SELECT count(*) AS n, ${isoTs('min(ts)')} AS min_ts FROM pending_rows`);
  const newReports = (await s.one<{ n: number }>('SELECT count(*) AS n FROM layer_rows')).n;
  const { kept, merged } = layersToMerge(prior, newReports);
  // The blocks the new reports fall in (merged layers' reports are in the previous series already).
  await s.run(`CREATE OR REPLACE TEMP TABLE touched_blocks AS SELECT DISTINCT epoch_us(ts) // ${BLOCK_US} * ${BLOCK_US} AS block_us FROM layer_rows`);
  // And the sessions they belong to: the only ones whose coarse buckets change (layer_coarse_delta.sql).
  await s.run('CREATE OR REPLACE TEMP TABLE touched_sessions AS SELECT DISTINCT streamId, sessionId FROM layer_rows');
  if (merged.length > 0 && prevFiles) {
    await s.run(`INSERT INTO layer_rows SELECT * FROM read_parquet(${fileList(merged.map((l) => prevFiles.layer(l.layerId).reports))}, hive_partitioning = false)`);
  }
  await layerPieces(s);
  const { streams, coarse } = await daySeries(s, base.prev && prevFiles ? { files: prevFiles, kept, merged } : null);
  // Nothing new and nothing merged (only compacted files the state had read): no layer to add.
  const layer = newReports === 0 && merged.length === 0 && base.prev ? null : await newLayer(s);
  const layers = layer ? [...kept, layer] : kept;
  const quarantinedNow = load.quarantined.filter((q) => landed.some((f) => f.relPath === q.relPath));
  const files = landed.filter((f) => !quarantinedNow.some((q) => q.relPath === f.relPath));
  const rowsRead = (base.prev?.rowsRead ?? 0) + load.rowsRead;
  const heldBack = Number(held.n);
  // Every deduplicated report the state holds, those held back included (as a state built whole counts them).
  const reports = layers.reduce((a, l) => a + l.reports, 0) + heldBack;
  const meta: StateMeta = {
    formatVersion: 1,
    stateId: newStateId(),
    stateVersion: stateVersion(),
    stateLayout: stateLayout(),
    codeVersion: codeVersion(),
    customerId: p.customerId,
    date: p.date,
    runId: ctx.runId,
    builtAt: new Date().toISOString(),
    files: await inputsWithSchemas(s, files, load, base.prev),
    presentColumns: [...new Set([...(base.prev?.presentColumns ?? []), ...load.presentColumns])].sort(),
    quarantined: [...(base.prev?.quarantined ?? []), ...quarantinedNow],
    rowsRead,
    reports,
    duplicatesDropped: rowsRead - reports,
    streams,
    maxTs: layers.map((l) => l.maxTs).reduce<string | null>((a, b) => (b !== null && (a === null || b > a) ? b : a), null),
    hourRows: layers.reduce((a, l) => a + l.hourRows, 0),
    seriesRows: 0,
    buildMs: 0,
    layers,
    ...(heldBack > 0 && held.min_ts ? { pending: { reports: heldBack, minTs: held.min_ts } } : {}),
    made: base.prev ? 'appended' : 'built',
  };
  await writeStates(layout, [
    {
      meta,
      write: async (out) => {
        for (const l of kept) await linkLayerFiles(prevFiles!.layer(l.layerId), out.layer(l.layerId), l);
        if (heldBack > 0) await copyTo(s, 'SELECT * FROM pending_rows ORDER BY ts', out.pending);
        if (layer) await writeLayerFiles(s, out.layer(layer.layerId));
        if (coarse) await copyTo(s, 'SELECT * FROM coarse_sums ORDER BY bucketSeconds, streamId, start_us', out.coarse);
        meta.seriesRows = await copyTo(s, 'SELECT * FROM state_series_all ORDER BY streamId, bucketSeconds, bucketStart', out.series, `, ROW_GROUP_SIZE ${SERIES_ROW_GROUP_SIZE}`);
        meta.buildMs = Date.now() - started;
      },
    },
  ]);
  return meta;
}

/**
 * The state's inputs, each with its schema (partition-load.ts fileSchema): from this build's read,
 * else from the previous state; a compacted file that this state absorbed (its rows were read
 * from the files it covers) has neither, and its footer is read for it, so that readers of the
 * snapshot's files (the analyst catalog) read it with the files of its schema rather than every
 * file by name.
 */
async function inputsWithSchemas(s: DbSession, files: readonly LandedFile[], load: NewReports, prev: StateMeta | null): Promise<StateInput[]> {
  const before = new Map((prev?.files ?? []).map((f) => [f.path, f.schema]));
  const known = (f: LandedFile) => load.schemaOf(f) ?? before.get(f.relPath);
  const unknown = files.filter((f) => known(f) === undefined);
  const verdicts = unknown.length > 0 ? await checkSchemas(s, unknown.map((f) => f.path)) : new Map<string, SchemaVerdict>();
  return files.map((f) => {
    const verdict = verdicts.get(f.path);
    return stateInput(f, known(f) ?? (verdict?.ok ? fileSchema(verdict.schema.columns) : undefined));
  });
}

/**
 * A new layer's reports remake the day's series where they fall: the buckets of the sizes up to
 * BLOCK_SECONDS (each lies in one block) from every layer's minute pieces of the blocks they touch,
 * the larger sizes (multiples of it, up to a day) from every layer's per-session buckets of those
 * sizes, which layers keep for that. An hour's minute pieces hold about 60 rows per active session
 * against one per-session bucket a layer: at live rates (thousands of sessions at once) remaking a
 * touched hour from its minutes cost more than the rest of the layer's build. The block is one
 * minute: with a block of 10 minutes (until 2026-11-28) a layer regrouped every minute piece of the
 * customer's current 10 minutes, up to 10 rows per active session whatever the layer held (845,000
 * rows at 150,000 sessions at once), where `start`'s runs ran out of DuckDB memory.
 * layer_touched_minutes.sql and layer_touched_series.sql write the block as a literal (60 s), so
 * that a change of it changes the state version (state-store.ts hashes the SQL): change all three.
 */
const BLOCK_SECONDS = 60;
const BLOCK_US = BigInt(BLOCK_SECONDS) * 1_000_000n;
const COARSE_SIZES = STANDARD_BUCKET_SECONDS.filter((size) => size > BLOCK_SECONDS);
if (STANDARD_BUCKET_SECONDS.some((size) => (size <= BLOCK_SECONDS ? BLOCK_SECONDS % size : size % BLOCK_SECONDS) !== 0)) {
  throw new Error(`every standard size must divide ${BLOCK_SECONDS} s or be a multiple of it`);
}
const HOUR_US = 3_600_000_000n;

/**
 * The minute pieces one statement of layer_touched_minutes.sql groups at most (before grouping,
 * over every layer): a layer whose reports touch more is remade in runs of its touched minutes.
 * A live run's layer touches a minute or two: one statement. A layer after an outage, or of late
 * reports, touches many; at 150,000 sessions at once, 18 touched minutes (2.4 M pieces) in one
 * grouping ran out of memory at 256MB, 384MB and 512MB (docs/benchmarks.md, 2026-11-29), and the
 * run failed again at every tick, each layer holding the last one's reports.
 */
const TOUCHED_MINUTES_MAX_ROWS = 400_000;

/**
 * The touched minutes in runs of consecutive ones, each of at most `maxRows` pieces (a minute of
 * more is a run of its own); one run of nothing when no minute is touched (the statement then
 * makes an empty `state_minutes`).
 */
export function touchedMinuteChunks(blocks: readonly { block_us: bigint; n: bigint }[], maxRows: number): { lo: bigint; hi: bigint }[] {
  if (blocks.length === 0) return [{ lo: 0n, hi: -1n }];
  const chunks: { lo: bigint; hi: bigint; rows: number }[] = [];
  for (const b of blocks) {
    const last = chunks.at(-1);
    const rows = Number(b.n);
    const block = BigInt(b.block_us);
    if (last && last.rows + rows <= maxRows) {
      last.hi = block;
      last.rows += rows;
    } else {
      chunks.push({ lo: block, hi: block, rows });
    }
  }
  return chunks.map(({ lo, hi }) => ({ lo, hi }));
}

/** Where a layered build's day series starts from: the previous state's files, its layers kept and merged into the new one. */
interface SeriesBase {
  files: ReturnType<typeof stateFiles>;
  kept: readonly LayerMeta[];
  merged: readonly LayerMeta[];
}

/**
 * `state_series_all`, the day's series over every layer, and `coarse_sums`, the partial sums of
 * its buckets longer than a minute (layer_coarse_sums.sql; not made when a kept layer has no
 * per-session buckets: the next build then makes them whole); returns the partition's stream count
 * and whether `coarse_sums` was made. On a previous state whose layers all keep per-session
 * buckets, only the buckets that the new reports touch are remade (layer_touched_minutes.sql, in
 * runs of touched minutes of bounded size,
 * layer_touched_series.sql): the minutes they fall in from every layer's minute pieces of
 * those minutes, the 5-minute to day buckets from the previous state's coarse sums and what
 * the new layer's sessions change in them (layer_coarse_delta.sql: never a regrouping of the day's
 * sessions); the rest is the previous series. Otherwise from every layer's minute pieces
 * (layer_state_minutes.sql).
 */
async function daySeries(s: DbSession, on: SeriesBase | null): Promise<{ streams: number; coarse: boolean }> {
  const layerFiles = (ls: readonly LayerMeta[]) => ls.map((l) => on!.files.layer(l.layerId));
  const keptFiles = layerFiles(on?.kept ?? []);
  const readAll = (paths: string[], empty: string, where = '') =>
    paths.length > 0 ? `SELECT * FROM read_parquet(${fileList(paths)}, hive_partitioning = false)${where}` : `SELECT * FROM ${empty} WHERE false`;
  const allExist = async (paths: string[]) => (await Promise.all(paths.map(exists))).every(Boolean);
  const keptSessions = keptFiles.map((f) => f.sessions);
  const wholeCoarseSums = () =>
    s.run(`CREATE OR REPLACE TEMP TABLE coarse_sums AS\n${coarseSumsOf(`SELECT * FROM layer_sessions UNION ALL BY NAME ${readAll(keptSessions, 'layer_sessions')}`)}`);
  const incremental = on !== null && (await allExist([on.files.series, ...keptSessions]));
  if (!incremental && keptFiles.length === 0) return singleLayerSeries(s);
  if (!incremental) {
    await s.run(pieceSql('layer_state_minutes', { kept: readAll(keptFiles.map((f) => f.minutes), 'layer_minutes') }));
    const streams = await streamCount(s, 'SELECT streamId FROM state_minutes');
    await buildSeries(s);
    await s.run('CREATE OR REPLACE TEMP TABLE state_series_all AS SELECT * EXCLUDE (customer, date) FROM state_series');
    const coarse = await allExist(keptSessions);
    if (coarse) await wholeCoarseSums();
    return { streams, coarse };
  }
  // Kept minute and session files are sorted by start_us (sessions by size first): a filter on
  // the touched blocks' span skips the rest of their row groups.
  const span = await s.one<{ lo: bigint | null; hi: bigint | null }>('SELECT min(block_us) AS lo, max(block_us) AS hi FROM touched_blocks');
  const inSpan = span.lo === null ? ' WHERE false' : ` WHERE start_us >= ${span.lo} AND start_us < ${BigInt(span.hi!) + BLOCK_US}`;
  const keptMinutes = (where: string) => readAll(keptFiles.map((f) => f.minutes), 'layer_minutes', where);
  // One touched minute (a live run's layer, most often) is one run whatever it holds: no count.
  const blocks =
    span.lo !== null && BigInt(span.lo) === BigInt(span.hi!)
      ? [{ block_us: BigInt(span.lo), n: 0n }]
      : await s.all<{ block_us: bigint; n: bigint }>(fillSql(sqlFile('layer_touched_block_rows'), { kept: keptMinutes(inSpan) }));
  for (const [i, chunk] of touchedMinuteChunks(blocks, testTouchedMinutesMaxRows() ?? TOUCHED_MINUTES_MAX_ROWS).entries()) {
    await s.run(
      pieceSql('layer_touched_minutes', {
        into: i === 0 ? 'CREATE OR REPLACE TEMP TABLE state_minutes AS' : 'INSERT INTO state_minutes',
        kept: keptMinutes(` WHERE start_us >= ${chunk.lo} AND start_us < ${chunk.hi + BLOCK_US}`),
        lo: String(chunk.lo),
        hi: String(chunk.hi),
      }),
    );
  }
  await s.run(fillSql(sqlFile('layer_touched_coarse'), { coarse_sizes: COARSE_SIZES.join(', ') }));
  await buildSeries(s, BLOCK_SECONDS);
  const mergedSessions = layerFiles(on.merged).map((f) => f.sessions);
  if ((await exists(on.files.coarse)) && (await allExist(mergedSessions))) {
    const spans = await s.all<{ size: number; lo: bigint; hi: bigint }>('SELECT bucketSeconds AS size, min(start_us) AS lo, max(start_us) AS hi FROM touched_coarse GROUP BY ALL');
    const inCoarseSpan =
      spans.length === 0 ? ' WHERE false' : ` WHERE ${spans.map((x) => `(bucketSeconds = ${Number(x.size)} AND start_us BETWEEN ${BigInt(x.lo)} AND ${BigInt(x.hi)})`).join(' OR ')}`;
    await s.run(
      pieceSql('layer_coarse_delta', {
        previous: `SELECT * FROM read_parquet(${quotedString(on.files.coarse)}, hive_partitioning = false)`,
        kept: readAll(keptSessions, 'layer_sessions', inCoarseSpan),
        merged: readAll(mergedSessions, 'layer_sessions', inCoarseSpan),
        coarse_sums_of_before: coarseSumsOf('SELECT * FROM before_rows'),
        coarse_sums_of_after: coarseSumsOf('SELECT * FROM after_rows'),
      }),
    );
  } else {
    await wholeCoarseSums();
  }
  await s.run(pieceSql('coarse_series_rows', { touched: 'SEMI JOIN touched_coarse AS t USING (bucketSeconds, start_us)' }));
  await s.run(fillSql(sqlFile('layer_touched_series'), { previous: quotedString(on.files.series) }));
  const streams = await streamCount(s, `SELECT streamId FROM read_parquet(${quotedString(on.files.series)}, hive_partitioning = false) UNION ALL SELECT streamId FROM layer_minutes`);
  return { streams, coarse: true };
}

/**
 * The coarse sums (layer_coarse_sums.sql) of per-session bucket rows of several layers, a session's
 * rows added up first (layer_session_buckets.sql).
 */
function coarseSumsOf(sessionBuckets: string): string {
  return pieceSql('layer_coarse_sums', { per_session_buckets: pieceSql('layer_session_buckets', { session_buckets: sessionBuckets }) });
}

/**
 * daySeries for a state of one layer (no layer kept: a layer of a whole day, the first layered
 * build of a day such as the first after a deployment, or every earlier layer merged into the new
 * one): its minute series from the layer's minute pieces as they are (one row per stream, session
 * and minute already: no copy regrouped into `state_minutes`), its coarse sums from the layer's
 * per-session buckets as they are (layer_coarse_sums.sql over layer_sessions: no regrouping per
 * session), and the series of the sizes past a minute from those sums (coarse_series_rows.sql,
 * every bucket), as a later layer remakes the buckets it touches: the same figures to the last
 * digit as the series regrouped from the minutes (buildSeries), without making every size's
 * per-session buckets a second time beside the layer's own.
 */
async function singleLayerSeries(s: DbSession): Promise<{ streams: number; coarse: boolean }> {
  await s.run(`CREATE OR REPLACE TEMP TABLE coarse_sums AS\n${pieceSql('layer_coarse_sums', { per_session_buckets: 'SELECT * FROM layer_sessions' })}`);
  await s.run('CREATE OR REPLACE TEMP VIEW state_minutes AS SELECT * FROM layer_minutes');
  const streams = await streamCount(s, 'SELECT streamId FROM layer_minutes');
  await buildSeries(s, BLOCK_SECONDS);
  await s.run(pieceSql('coarse_series_rows', { touched: '' }));
  await s.run('CREATE OR REPLACE TEMP TABLE state_series_all AS SELECT * EXCLUDE (customer, date) FROM state_series UNION ALL BY NAME SELECT * FROM coarse_rows');
  await dropRelations(s, ['state_series', 'coarse_rows']);
  return { streams, coarse: true };
}

/** Distinct streams of `query` and of the reports held back. */
async function streamCount(s: DbSession, query: string): Promise<number> {
  return Number((await s.one<{ n: number }>(`SELECT count(DISTINCT streamId) AS n FROM (${query} UNION ALL SELECT streamId FROM pending_rows)`)).n);
}

/**
 * The layers kept as they are, and the trailing ones merged into a layer of `newReports`: a layer
 * is merged while it holds at most MERGE_RATIO times what the new layer holds so far (so sizes at
 * least double going back, and a day holds a few layers), never past `maxReports` in all (a
 * build's own merge: INLINE_MERGE_MAX_REPORTS; the background merge: LAYER_MERGE_MAX_REPORTS).
 */
export function layersToMerge(prior: readonly LayerMeta[], newReports: number, maxReports = inlineMergeMaxReports()): { kept: LayerMeta[]; merged: LayerMeta[] } {
  const kept = [...prior];
  const merged: LayerMeta[] = [];
  let size = newReports;
  for (;;) {
    const last = kept[kept.length - 1];
    if (!last || last.reports > MERGE_RATIO * Math.max(size, 1) || last.reports + size > maxReports) break;
    kept.pop();
    merged.unshift(last);
    size += last.reports;
  }
  return { kept, merged };
}

/** `layer_hours`, `layer_minutes`, `layer_slots` and `layer_sessions`: a layer's pieces from its reports, `layer_rows`. */
export async function layerPieces(s: DbSession): Promise<void> {
  await s.run(pieceSql('layer_pieces', { reports: 'layer_rows', slot_us: String(SLOT_US) }));
  await s.run(pieceSql('layer_sessions', layerSessionsParts()));
}

/** layer_sessions.sql's lists: each coarse size's per-session buckets from the size before it (the smallest from the minutes). */
function layerSessionsParts(): { size_buckets: string; size_rows: string } {
  const table = (i: number) => (i < 0 ? 'layer_minutes' : `session_buckets_${COARSE_SIZES[i]}`);
  const tables = COARSE_SIZES.map((size, i) => `${table(i)} AS MATERIALIZED (\n${withBucketSeconds(pieceSql('session_buckets', { pieces: table(i - 1) }), size)}\n)`);
  const rows = COARSE_SIZES.map((size, i) => `SELECT CAST(${size} AS INTEGER) AS bucketSeconds, * FROM ${table(i)}`);
  return { size_buckets: `WITH ${tables.join(',\n')}`, size_rows: rows.join('\nUNION ALL\n') };
}

/** Where a layer's four files sit (state-store.ts stateFiles). */
type LayerFiles = ReturnType<ReturnType<typeof stateFiles>['layer']>;
const LAYER_FILE_KINDS = ['reports', 'hours', 'minutes', 'sessions'] as const;

/** `query` into a state file; the rows written. */
function copyTo(s: DbSession, query: string, file: string, rowGroup = ''): Promise<number> {
  return s.run(`COPY (${query}) TO ${quotedString(file)} (FORMAT parquet, COMPRESSION ${STATE_COMPRESSION}${rowGroup})`);
}

/** A layer's five files from `layer_rows` and its pieces (layerPieces). */
export async function writeLayerFiles(s: DbSession, to: LayerFiles): Promise<void> {
  await copyTo(s, 'SELECT * FROM layer_rows ORDER BY ts', to.reports, `, ROW_GROUP_SIZE ${REPORT_ROW_GROUP_SIZE}`);
  await copyTo(s, 'SELECT * FROM layer_hours', to.hours);
  await copyTo(s, 'SELECT * FROM layer_slots ORDER BY start_us', to.slots, `, ROW_GROUP_SIZE ${SLOT_ROW_GROUP_SIZE}`);
  await copyTo(s, 'SELECT * FROM layer_minutes ORDER BY start_us', to.minutes);
  await copyTo(s, 'SELECT * FROM layer_sessions ORDER BY bucketSeconds, start_us', to.sessions);
}

/** A timestamp expression as a layer's meta records it (minTs, maxTs): ISO 8601, microseconds, UTC. */
const isoTs = (expr: string) => `strftime(${expr}, '%Y-%m-%dT%H:%M:%S.%fZ')`;

/**
 * A merged layer's four files (`to`, named by `layerId`) from the files of the layers it merges
 * (`layers`, oldest first, and `from`, their files in the same order), and its meta: the layers'
 * reports (already deduplicated against each other when each was built) in one file by ts, and
 * its pieces regrouped from theirs (merged_layer_hours.sql, merged_layer_series_pieces.sql): the
 * files the layer would have had if built from those reports at once. Each file is written from
 * the files, holding no table, by one statement or (the series pieces) by one a part, each part's
 * grouping a fraction of the day's (orderedRanges): a merge's memory is that of a grouping or a sort,
 * which DuckDB spills past its limit, not the merged reports (the merge once loaded them into a
 * table, which bounded the largest merge `start` could make).
 */
export async function writeMergedLayerFiles(s: DbSession, layers: readonly LayerMeta[], from: readonly LayerFiles[], to: LayerFiles, layerId: string): Promise<LayerMeta> {
  const files = (kind: keyof LayerFiles) => fileList(from.map((f) => f[kind]));
  // Each layer's file is sorted by ts; when each layer begins after the one before it ends (the
  // usual case: late reports are few), their files one after the other are too, and no sort is
  // needed (DuckDB reads a list of files in its order).
  const sortReports = layersInTsOrder(layers) ? '' : ' ORDER BY ts';
  await copyTo(s, `SELECT * FROM read_parquet(${files('reports')}, hive_partitioning = false)${sortReports}`, to.reports, `, ROW_GROUP_SIZE ${REPORT_ROW_GROUP_SIZE}`);
  const hourRows = await copyTo(s, pieceSql('merged_layer_hours', { files: files('hours') }), to.hours);
  // The slot pieces regrouped from the layers' own, or (a layer without any) grouped from the merged reports.
  const slots = layers.every(hasSlots)
    ? pieceSql('merged_layer_slots', { files: files('slots') })
    : `SELECT * FROM (${pieceSql('layer_slot_rows', { reports: `read_parquet(${quotedString(to.reports)}, hive_partitioning = false)`, slot_us: String(SLOT_US) })}) ORDER BY start_us`;
  const slotRows = await copyTo(s, slots, to.slots, `, ROW_GROUP_SIZE ${SLOT_ROW_GROUP_SIZE}`);
  // The minute pieces an hour of start_us at a time, the per-session buckets a size at a time
  // (their files are sorted so: each part reads its own row groups).
  const seriesPieces = async (kind: 'minutes' | 'sessions', keys: string, parts: readonly string[], order: string) => {
    const partFiles = parts.map((_, i) => `${to[kind]}.part-${i}.parquet`);
    for (const [i, part] of parts.entries()) await copyTo(s, pieceSql('merged_layer_series_pieces', { files: files(kind), keys, part, order }), partFiles[i]!);
    await copyTo(s, `SELECT * FROM read_parquet(${fileList(partFiles)}, hive_partitioning = false)`, to[kind]);
    await Promise.all(partFiles.map((f) => fs.rm(f, { force: true })));
  };
  await seriesPieces('minutes', 'streamId, sessionId, start_us', orderedRanges('start_us', Array.from({ length: 23 }, (_, h) => String(dayStartUs(layers) + BigInt(h + 1) * HOUR_US))), 'start_us');
  await seriesPieces('sessions', 'bucketSeconds, streamId, sessionId, start_us', orderedRanges('bucketSeconds', COARSE_SIZES.slice(0, -1).map(String)), 'bucketSeconds, start_us');
  const r = await s.one<{ n: number; min_ts: string | null; max_ts: string | null }>(
    `SELECT count(*) AS n, ${isoTs('min(ts)')} AS min_ts, ${isoTs('max(ts)')} AS max_ts
     FROM read_parquet(${quotedString(to.reports)}, hive_partitioning = false)`,
  );
  return { layerId, builtAt: new Date().toISOString(), reports: Number(r.n), minTs: r.min_ts, maxTs: r.max_ts, hourRows, slotRows };
}

/**
 * Conditions on `column` that cut its values into consecutive ranges, in order, at the ascending
 * `bounds` (SQL expressions): `<= b0`, `> b0 AND <= b1`, …, `> b(n-1)`. Every non-NULL value is in
 * exactly one; the files written from them one after the other are in the column's order.
 */
export function orderedRanges(column: string, bounds: readonly string[]): string[] {
  return [...bounds, null].map((b, i) => {
    const above = i === 0 ? null : `${column} > ${bounds[i - 1]}`;
    const upTo = b === null ? null : `${column} <= ${b}`;
    return [above, upTo].filter((c) => c !== null).join(' AND ') || 'true';
  });
}

/** The start of the UTC day of the merged layers' reports, epoch µs (0 when they hold none). */
function dayStartUs(layers: readonly LayerMeta[]): bigint {
  const first = layers.find((l) => l.minTs != null)?.minTs;
  return first ? BigInt(Math.floor(Date.parse(first) / 86_400_000) * 86_400_000) * 1000n : 0n;
}

/** Whether each layer's reports all come at or after every report of the layer before it (by their recorded minTs and maxTs). */
export function layersInTsOrder(layers: readonly LayerMeta[]): boolean {
  return layers.every((l, i) => {
    const before = layers[i - 1];
    return before === undefined || (l.minTs != null && before.maxTs != null && Date.parse(l.minTs) >= Date.parse(before.maxTs));
  });
}

/** A layer kept by a new state: its files hard-linked into the new state's folder. */
export async function linkLayerFiles(from: LayerFiles, to: LayerFiles, layer: Pick<LayerMeta, 'slotRows'>): Promise<void> {
  for (const k of LAYER_FILE_KINDS) await fs.link(from[k], to[k]);
  if (hasSlots(layer)) await fs.link(from.slots, to.slots);
}

/** The new layer's meta, from its tables. */
export async function newLayer(s: DbSession): Promise<LayerMeta> {
  const r = await s.one<{ n: number; min_ts: string | null; max_ts: string | null; hours: number; slots: number }>(
    `SELECT (SELECT count(*) FROM layer_rows) AS n,
            (SELECT ${isoTs('min(ts)')} FROM layer_rows) AS min_ts,
            (SELECT ${isoTs('max(ts)')} FROM layer_rows) AS max_ts,
            (SELECT count(*) FROM layer_hours) AS hours,
            (SELECT count(*) FROM layer_slots) AS slots`,
  );
  return {
    layerId: newStateId(),
    builtAt: new Date().toISOString(),
    reports: Number(r.n),
    minTs: r.min_ts,
    maxTs: r.max_ts,
    hourRows: Number(r.hours),
    slotRows: Number(r.slots),
  };
}

/** What reading the new files gave: `layer_rows`, the files' checks, and the rows read. */
interface NewReports extends Pick<LoadOutcome, 'quarantined' | 'presentColumns'> {
  rowsRead: number;
  schemaOf: (f: LandedFile) => string | undefined;
}

/**
 * `layer_rows` from `files` (checked first, bad ones quarantined: readScreened, as partition-state.ts
 * reads), deduplicated among themselves.
 */
async function readNewReports(ctx: LoadContext, files: readonly LandedFile[]): Promise<NewReports> {
  const { load, result: rowsRead } = await readScreened(ctx, files, async (l) => {
    await ctx.s.run(loadSql(l.files, new Set(l.presentColumns), STATE_COLUMNS, 'VIEW'));
    await ctx.s.run(sqlFile('dedup_batch'));
    await ctx.s.run(pieceSql('layer_new_reports'));
    const perFile = l.files.length === 0 ? [] : await ctx.s.all<{ n: number }>(fillSql(sqlFile('files_read'), { files: fileList(l.files.map((f) => f.path)) }));
    return perFile.reduce((a, r) => a + Number(r.n), 0);
  });
  return { quarantined: load.quarantined, presentColumns: load.presentColumns, rowsRead, schemaOf: (f) => (load.files.includes(f) ? load.schemaOf(f) : undefined) };
}
