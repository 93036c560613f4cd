// Layered partition states, for recent days (docs/warehouse-state.md, "Layered states"): a file
// that lands into today's partition adds a layer to its state instead of a rebuild from every
// file of the day, so that a tick costs what is new, not what the day holds.
// A layer holds the reports of the files that landed since the previous build, deduplicated among
// themselves and against the earlier layers by the one rule, as report pieces sorted by ts (what
// window edges and asOf cuts are read from), hour pieces and minute pieces. The state's series
// is made from every layer's minute pieces. Small trailing layers are merged into the new one
// (sizes at least double going back), so a day holds a few layers, not one per tick.
// The state is rebuilt from its files (one layer) when it cannot be appended to: no layered
// state yet, other state code, a file changed or removed (other than by compaction of files the
// state has read), or a new copy of a report that the rule would keep instead of an earlier one.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileList, quotedString, sqlFile } from './sql-files.ts';
import { STATE_COMPRESSION } from './parquet-write.ts';
import type { DbSession } from './duckdb/session.ts';
import { isFileError, type LandedFile } from './landing.ts';
import { loadSql, quarantineUnreadable, screenFiles, type LoadContext, type LoadOutcome } from './partition-load.ts';
import { pieceSql } from './piece-columns.ts';
import { STATE_COLUMNS } from './report-columns.ts';
import { buildSeries, SERIES_ROW_GROUP_SIZE, type PartitionToBuild } from './partition-state.ts';
import { newStateId, stateFiles, stateInput, stateVersion, writeStates, type LayerMeta, type StateInput, type StateMeta } from './state-store.ts';
import { dropRelations } from './temp-relations.ts';
import { partitionFolder, type RecordsByPartition } from './compaction-records.ts';
import { codeVersion } from '../lib/version.ts';

/** Report files are read by ts range (window edges, asOf's minute): row groups small enough to skip. */
const REPORT_ROW_GROUP_SIZE = 16_384;

/** A layer is merged into a newer one while it holds at most this many times the newer reports. */
const MERGE_RATIO = 2;

/** Layers larger than this are never merged again (a merge costs what it rewrites). */
export const MAX_MERGED_LAYER_REPORTS = 1_000_000;

/** Whether a partition's state is layered: its date is asOf's or the day before (late reports of yesterday keep landing after midnight). */
export function isLayeredDate(date: string, asOf: Date): boolean {
  return date >= new Date(asOf.getTime() - 86_400_000).toISOString().slice(0, 10);
}

const RELATIONS = ['raw_reports', 'reports', 'dedup_dropped', 'layer_rows', 'layer_prior', 'layer_hours', 'layer_minutes', 'state_minutes', 'state_series', 'series_rows'];

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
): Promise<StateMeta> {
  const started = Date.now();
  const base = appendBase(p, landed, prev, records);
  try {
    const built = await buildOn(ctx, p, base, landed, started);
    if (built) return built;
    ctx.log.info({ partition: `${p.customerId}/${p.date}` }, 'a new copy of a report outranks an earlier layer\'s: building the state whole');
    await dropRelations(ctx.s, RELATIONS);
    return (await buildOn(ctx, p, { prev: null, fresh: [...landed], wholeBecause: 'copy outranks' }, landed, started))!;
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
async function buildOn(ctx: LoadContext, p: PartitionToBuild, base: AppendBase, landed: readonly LandedFile[], started: number): Promise<StateMeta | null> {
  const { s, layout } = ctx;
  const load = await readNewReports(ctx, base.fresh);
  const prevFiles = base.prev ? stateFiles(layout, base.prev) : null;
  const prior = base.prev?.layers ?? [];
  if (prior.length > 0 && prevFiles) {
    const [copies] = await s.all<{ copies: number; outranking: number }>(
      pieceSql('layer_prior_copies', { prior: fileList(prior.map((l) => prevFiles.layer(l.layerId).reports)) }),
    );
    if (copies && copies.outranking > 0) return null;
    if (copies && copies.copies > 0) await s.run('DELETE FROM layer_rows WHERE reportId IN (SELECT reportId FROM layer_prior)');
  }
  const newReports = (await s.one<{ n: number }>('SELECT count(*) AS n FROM layer_rows')).n;
  const { kept, merged } = layersToMerge(prior, newReports);
  if (merged.length > 0 && prevFiles) {
    await s.run(`INSERT INTO layer_rows SELECT * FROM read_parquet(${fileList(merged.map((l) => prevFiles.layer(l.layerId).reports))}, hive_partitioning = false)`);
  }
  await s.run(pieceSql('layer_pieces'));
  const keptMinutes = kept.length > 0 && prevFiles ? `SELECT * FROM read_parquet(${fileList(kept.map((l) => prevFiles.layer(l.layerId).minutes))}, hive_partitioning = false)` : 'SELECT * FROM layer_minutes WHERE false';
  await s.run(pieceSql('layer_state_minutes', { kept: keptMinutes }));
  const streams = (await s.one<{ n: number }>('SELECT count(DISTINCT streamId) AS n FROM state_minutes')).n;
  await buildSeries(s);
  // Nothing new and nothing merged (only compacted files the state had read): no layer to add.
  const layer = newReports === 0 && merged.length === 0 && base.prev ? null : await newLayer(s);
  const layers = layer ? [...kept, layer] : kept;
  const quarantinedNow = load.quarantined.filter((q) => landed.some((f) => f.relPath === q.relPath));
  const files = landed.filter((f) => !quarantinedNow.some((q) => q.relPath === f.relPath));
  const rowsRead = (base.prev?.rowsRead ?? 0) + load.rowsRead;
  const reports = layers.reduce((a, l) => a + l.reports, 0);
  const meta: StateMeta = {
    formatVersion: 1,
    stateId: newStateId(),
    stateVersion: stateVersion(),
    codeVersion: codeVersion(),
    customerId: p.customerId,
    date: p.date,
    runId: ctx.runId,
    builtAt: new Date().toISOString(),
    files: files.map((f): StateInput => stateInput(f, load.schemaOf(f) ?? base.prev?.files.find((x) => x.path === f.relPath)?.schema)),
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
    made: base.prev ? 'appended' : 'built',
  };
  await writeStates(layout, [
    {
      meta,
      write: async (out) => {
        for (const l of kept) {
          const from = prevFiles!.layer(l.layerId);
          const to = out.layer(l.layerId);
          for (const k of ['reports', 'hours', 'minutes'] as const) await fs.link(from[k], to[k]);
        }
        const copy = (query: string, file: string, rowGroup = '') =>
          s.run(`COPY (${query}) TO ${quotedString(file)} (FORMAT parquet, COMPRESSION ${STATE_COMPRESSION}${rowGroup})`);
        if (layer) {
          const to = out.layer(layer.layerId);
          await copy('SELECT * FROM layer_rows ORDER BY ts', to.reports, `, ROW_GROUP_SIZE ${REPORT_ROW_GROUP_SIZE}`);
          await copy('SELECT * FROM layer_hours', to.hours);
          await copy('SELECT * FROM layer_minutes ORDER BY start_us', to.minutes);
        }
        meta.seriesRows = await copy('SELECT * EXCLUDE (customer, date) FROM state_series', out.series, `, ROW_GROUP_SIZE ${SERIES_ROW_GROUP_SIZE}`);
        meta.buildMs = Date.now() - started;
      },
    },
  ]);
  return meta;
}

/**
 * The layers kept as they are, and the trailing ones merged into the new layer: a layer is merged
 * while it holds at most MERGE_RATIO times what the new layer holds so far (so sizes at least
 * double going back, and a day holds a few layers), never past MAX_MERGED_LAYER_REPORTS.
 */
function layersToMerge(prior: readonly LayerMeta[], newReports: number): { kept: LayerMeta[]; merged: LayerMeta[] } {
  const kept = [...prior];
  const merged: LayerMeta[] = [];
  let size = newReports;
  for (;;) {
    const last = kept[kept.length - 1];
    if (!last || last.reports > MERGE_RATIO * Math.max(size, 1) || last.reports + size > MAX_MERGED_LAYER_REPORTS) break;
    kept.pop();
    merged.unshift(last);
    size += last.reports;
  }
  return { kept, merged };
}

/** The new layer's meta, from its tables. */
async function newLayer(s: DbSession): Promise<LayerMeta> {
  const r = await s.one<{ n: number; max_ts: string | null; hours: number }>(
    `SELECT (SELECT count(*) FROM layer_rows) AS n,
            (SELECT strftime(max(ts), '%Y-%m-%dT%H:%M:%S.%fZ') FROM layer_rows) AS max_ts,
            (SELECT count(*) FROM layer_hours) AS hours`,
  );
  return { layerId: newStateId(), builtAt: new Date().toISOString(), reports: Number(r.n), maxTs: r.max_ts, hourRows: Number(r.hours) };
}

/** What reading the new files gave: `layer_rows`, the files' checks, and the rows read. */
interface NewReports extends Pick<LoadOutcome, 'quarantined' | 'presentColumns'> {
  rowsRead: number;
  schemaOf: (f: LandedFile) => string | undefined;
}

/**
 * `layer_rows` from `files` (checked first, bad ones quarantined; a file whose pages are broken is
 * found by reading each alone, as partition-state.ts does), deduplicated among themselves.
 */
async function readNewReports(ctx: LoadContext, files: readonly LandedFile[]): Promise<NewReports> {
  let load: LoadOutcome | null = files.length > 0 ? await screenFiles(ctx, files) : null;
  for (;;) {
    const good = load?.files ?? [];
    try {
      await ctx.s.run(loadSql(good, new Set(load?.presentColumns ?? []), STATE_COLUMNS, 'VIEW'));
      await ctx.s.run(sqlFile('dedup_batch'));
      await ctx.s.run(pieceSql('layer_new_reports'));
      const rowsRead = good.length === 0 ? 0 : (await ctx.s.one<{ n: number }>(`SELECT CAST(sum(num_rows) AS BIGINT) AS n FROM parquet_file_metadata(${fileList(good.map((f) => f.path))})`)).n;
      return {
        quarantined: load?.quarantined ?? [],
        presentColumns: load?.presentColumns ?? [],
        rowsRead: Number(rowsRead ?? 0),
        schemaOf: (f) => (load && load.files.includes(f) ? load.schemaOf(f) : undefined),
      };
    } catch (err) {
      if (!isFileError(err) || !load) throw err;
      const checked = await quarantineUnreadable(ctx, load.files, (f) => new Set(load!.presentColumnsOf([f])), STATE_COLUMNS);
      if (checked.files.length === load.files.length) throw err;
      load = { ...load, files: checked.files, quarantined: [...load.quarantined, ...checked.quarantined], presentColumns: load.presentColumnsOf(checked.files) };
    }
  }
}
