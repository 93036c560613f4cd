// Partition states on disk: one immutable folder per built state of a (customer, date) partition,
// recorded with the exact files it was built from and the code that built it, so that a run
// reuses every state whose inputs did not change (docs/warehouse-state.md).
// A state is written under a temporary folder name, every file fsynced, its meta.json last, then
// the folder is renamed into place: a folder without the `.tmp-` prefix is a complete state, and a
// half-built one (killed mid-way) is never mistaken for one.
import fs from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import pLimit from 'p-limit';
import { sqlFile } from '../duckdb/index.ts';
import { QuarantinedSchema } from '../snapshots/index.ts';
import { PIECE_COLUMNS } from '../figures/index.ts';
import { KNOWN_COLUMNS } from '../session-reports/index.ts';
import { compactIso } from '../../lib/time.ts';
import { fsyncDir, fsyncFile, readdirSyncOrEmpty, writeJsonDurable } from '../../lib/fsx.ts';
import { codeVersion } from '../../lib/version.ts';
import { testStateSalts } from '../../lib/config.ts';
import { StampedReads } from '../../lib/stamped-reads.ts';
import { ownedScratchName } from '../../lib/scratch-owner.ts';
import type { WarehouseLayout } from '../layout.ts';
import type { LandedFile } from '../landing/index.ts';

export const TMP_PREFIX = '.tmp-';

/**
 * Bump when the meaning or layout of a state's files changes without the column catalogs changing
 * (a column that means something else, a file added or reshaped by SQL alone): states of another
 * format cannot be read by this code and are rebuilt before a run publishes.
 */
const STATE_FORMAT = 4;

/**
 * SQL whose text decides what a state holds (its files, its meta's figures, and the edge-hour
 * files kept beside it): any change to it makes every state stale (rebuilt in the background,
 * `decidePartition`).
 */
const STATE_SQL = [
  'load_raw', 'validate_rows', 'dedup_reports', 'report_files', 'dedup_raw', 'dedup_raw_delete', 'dedup_batch', 'state_pieces', 'state_minutes', 'session_keys_exact', 'session_buckets', 'series_of_buckets',
  'series_combine', 'series_from_buckets', 'series_rows', 'coarser_buckets', 'state_series', 'partition_figures', 'files_read', 'partition_rows',
  'report_pieces', 'edge_reports', 'edge_hour_pieces',
  'layer_new_reports', 'layer_prior_copies', 'layer_pieces', 'layer_slot_rows', 'merged_layer_slots', 'layer_state_minutes', 'layer_sessions', 'layer_touched_minutes',
  'layer_touched_block_rows', 'layer_touched_coarse',
  'layer_session_buckets', 'layer_coarse_sums', 'layer_coarse_delta', 'coarse_series_rows', 'layer_touched_series',
];

const cached = new Map<string, string>();
function memo(key: string, make: () => string): string {
  let v = cached.get(key);
  if (v === undefined) cached.set(key, (v = make()));
  return v;
}

/**
 * The layout of a state's files: the format number and the column catalogs (of reports, and of the
 * pieces that the SQL's column lists come from). A state of another layout cannot be read by this
 * code: it is rebuilt before a run publishes.
 */
export function stateLayout(): string {
  // Tests simulate a deployment by salting the hashes (lib/config.ts `testStateSalts`); '' otherwise.
  const salt = testStateSalts().layout;
  return memo(`layout\n${salt}`, () => {
    const h = createHash('sha256');
    h.update(`format ${STATE_FORMAT}\n${salt}\n`);
    h.update(JSON.stringify(KNOWN_COLUMNS));
    h.update(JSON.stringify(PIECE_COLUMNS));
    return `l${STATE_FORMAT}-${h.digest('hex').slice(0, 16)}`;
  });
}

/**
 * The version of the code that builds states: its layout and a hash of the SQL that computes them.
 * Not the git commit: a commit that does not touch how states are built must not throw every state
 * away. A state of the same layout but other SQL is stale but readable (`decidePartition`).
 */
export function stateVersion(): string {
  const salt = testStateSalts().code;
  const layout = stateLayout();
  return memo(`version\n${layout}\n${salt}`, () => {
    const h = createHash('sha256');
    h.update(`${layout}\n${salt}\n`);
    for (const name of STATE_SQL) h.update(`${name}\n${sqlFile(name)}\n`);
    return `s${STATE_FORMAT}-${h.digest('hex').slice(0, 16)}`;
  });
}

/** Whether this code can read a state: built by it, or by other SQL of the same layout (stale but readable). */
export function stateReadable(m: Pick<StateMeta, 'stateVersion' | 'stateLayout'>): boolean {
  return m.stateVersion === stateVersion() || m.stateLayout === stateLayout();
}

export const StateInputSchema = z.object({
  /** Relative to the landing root (raw/session_reports). */
  path: z.string(),
  size: z.number().int().nonnegative(),
  mtimeMs: z.number(),
  /** Its columns and types (partition-load.ts `fileSchema`); absent in states built before it was recorded. */
  schema: z.string().optional(),
});
export type StateInput = z.infer<typeof StateInputSchema>;

/**
 * One layer of a layered state (layered-state.ts): the reports of the files that landed between
 * two builds, none of which an earlier layer holds, as report pieces, hour pieces and minute pieces.
 */
export const LayerMetaSchema = z.object({
  layerId: z.string(),
  builtAt: z.string(),
  /** Deduplicated reports it holds. */
  reports: z.number(),
  /** Its earliest report's ts (absent in layers made before it was recorded): with maxTs, the hours its pieces lie in (window-pieces.ts class units). */
  minTs: z.string().nullable().optional(),
  maxTs: z.string().nullable(),
  hourRows: z.number(),
  /** Rows of its slots file (SLOT_US below); absent in layers made before it had one. */
  slotRows: z.number().optional(),
});
export type LayerMeta = z.infer<typeof LayerMetaSchema>;

/**
 * The length of a layer's slot pieces (layer_slot_rows.sql), µs: a window edge that
 * cuts an hour is read report by report over one slot, the hour's other slots as slot pieces
 * (window-pieces.ts layeredEdgePieces). Shorter slots read fewer reports at the edge and more
 * pieces elsewhere: a session reporting every 30 s has 10 reports in a 5-minute slot.
 */
export const SLOT_US = 300_000_000n;

/** Whether a layer has a slots file (layers made before 2026-11-29 have none: their cut hours are read report by report). */
export const hasSlots = (l: Pick<LayerMeta, 'slotRows'>): boolean => l.slotRows !== undefined;

export const StateMetaSchema = z.object({
  formatVersion: z.literal(1),
  stateId: z.string(),
  /** The state code that built it: its layout and SQL (`stateVersion()`). */
  stateVersion: z.string(),
  /** The layout of its files (`stateLayout()`); absent in states built before it was recorded, which no later code reads. */
  stateLayout: z.string().optional(),
  codeVersion: z.string(),
  customerId: z.string(),
  date: z.string(),
  runId: z.string(),
  builtAt: z.string(),
  /** The good files the state was built from, exactly (path, size, modification time). */
  files: z.array(StateInputSchema),
  presentColumns: z.array(z.string()),
  /** Files of the partition that this build quarantined. */
  quarantined: z.array(QuarantinedSchema),
  rowsRead: z.number(),
  /** Deduplicated reports (every ts). */
  reports: z.number(),
  duplicatesDropped: z.number(),
  streams: z.number(),
  /** The latest ts of its deduplicated reports (null: none): a state whose reports are all at or
   * before a snapshot's asOf serves that snapshot whole (its hour pieces and its day's series). */
  maxTs: z.string().nullable(),
  hourRows: z.number(),
  seriesRows: z.number(),
  buildMs: z.number(),
  /**
   * A layered state's layers, oldest first (recent days: a new file adds a layer instead of a
   * rebuild, layered-state.ts); absent in a state built whole, whose files are hours.parquet and
   * series.parquet only.
   */
  layers: z.array(LayerMetaSchema).optional(),
  /**
   * A layered state's reports after the asOf of the run that built it, held back from its layers
   * (layered-state.ts) until a run's asOf reaches them: how many, and the earliest ts.
   */
  pending: z.object({ reports: z.number(), minTs: z.string() }).optional(),
  /** How the state was made from the partition's previous one: `appended` a layer, built whole, or `merged`: its layers, some merged into one (layer-merge.ts). */
  made: z.enum(['built', 'appended', 'merged']).optional(),
});
export type StateMeta = z.infer<typeof StateMetaSchema>;

export function partitionKey(customerId: string, date: string): string {
  return `${customerId}/${date}`;
}

export function statePartitionDir(layout: WarehouseLayout, customerId: string, date: string): string {
  return path.join(layout.state, `customer=${customerId}`, `date=${date}`);
}

/** Where each file of a state sits. */
export function stateFiles(layout: WarehouseLayout, meta: { customerId: string; date: string; stateId: string }) {
  const dir = path.join(statePartitionDir(layout, meta.customerId, meta.date), meta.stateId);
  return {
    dir,
    meta: path.join(dir, 'meta.json'),
    /** Partial sums per (stream, session, hour): what windows are made of. */
    hours: path.join(dir, 'hours.parquet'),
    /**
     * The deduplicated reports of the open hour after `startUs` as pieces (report_pieces.sql),
     * written beside the state the first time a window edge cuts that hour (window-pieces.ts).
     */
    edgeHour: (startUs: bigint) => path.join(dir, `edge-hour-${startUs}.parquet`),
    /** The day's series of every standard bucket size, in the snapshot's layout. */
    series: path.join(dir, 'series.parquet'),
    /**
     * A layered state's partial sums of its series buckets longer than a minute, per (size,
     * stream, bucket): what the next layer updates (layer_coarse_sums.sql, layer_coarse_delta.sql).
     */
    coarse: path.join(dir, 'coarse.parquet'),
    /** A layered state's reports held back until asOf reaches them (report pieces, as a layer's). */
    pending: path.join(dir, 'pending.parquet'),
    /** A layer's files (layered states): report pieces sorted by ts, hour pieces, minute pieces. */
    layer: (layerId: string) => ({
      reports: path.join(dir, `layer-${layerId}-reports.parquet`),
      hours: path.join(dir, `layer-${layerId}-hours.parquet`),
      minutes: path.join(dir, `layer-${layerId}-minutes.parquet`),
      /** Per-session buckets of the sizes longer than a minute (layer_sessions.sql). */
      sessions: path.join(dir, `layer-${layerId}-sessions.parquet`),
      /** Slot pieces per (5-minute slot, stream, session), sorted by slot (layer_pieces.sql `layer_slots`); absent in layers made before 2026-11-29. */
      slots: path.join(dir, `layer-${layerId}-slots.parquet`),
    }),
  };
}

/**
 * What names a state's file for good: a layer's file by its partition and its name (a layer id is
 * unique, and each new state of the partition hard-links the layers it keeps under that name into
 * its own folder), any other file by its path within the state area (a state's folder names its
 * content). Never by the warehouse's own path: a warehouse moved
 * or restored elsewhere keeps the names of what it made (class units' files are named by these),
 * instead of making them all again at its first run.
 */
export function durableStateFileName(layout: WarehouseLayout, file: string): string {
  const name = path.basename(file);
  if (!name.startsWith('layer-')) return path.relative(layout.state, file).split(path.sep).join('/');
  const partition = path.dirname(path.dirname(file)); // <state>/customer=<id>/date=<d>/<state id>/layer-…
  return `${path.basename(path.dirname(partition))}/${path.basename(partition)}/${name}`;
}

/** The hour-piece files of a state: its layers', or its own. */
export function stateHourFiles(layout: WarehouseLayout, meta: StateMeta): string[] {
  const files = stateFiles(layout, meta);
  return meta.layers ? meta.layers.map((l) => files.layer(l.layerId).hours) : [files.hours];
}

/** The report files of a layered state's layers (none for a state built whole). */
export function stateReportFiles(layout: WarehouseLayout, meta: StateMeta): string[] {
  const files = stateFiles(layout, meta);
  return (meta.layers ?? []).map((l) => files.layer(l.layerId).reports);
}

/**
 * The session classes of one class unit of a customer at one signature (class-units.ts), named by
 * a hash of the unit's hour-piece files and the signature: state/customer=<id>/classes-<key>.parquet.
 */
export function classesFile(layout: WarehouseLayout, customerId: string, key: string): string {
  return path.join(layout.state, `customer=${customerId}`, `classes-${key}.parquet`);
}

/**
 * A customer's compacted series of the days first..last (series-blocks.ts), named by a
 * hash of which states it holds: state/customer=<id>/series-<first>_<last>-<key>.parquet.
 */
export function seriesBlockFile(layout: WarehouseLayout, customerId: string, first: string, last: string, key: string): string {
  return path.join(layout.state, `customer=${customerId}`, `series-${first}_${last}-${key}.parquet`);
}

export function newStateId(): string {
  return `${compactIso(new Date())}-${randomBytes(4).toString('hex')}`;
}

/** The input record of a landed file, with its schema when it has been read (states record it). */
export function stateInput(file: LandedFile & { mtimeMs: number }, schema?: string): StateInput {
  return { path: file.relPath, size: file.size, mtimeMs: file.mtimeMs, ...(schema === undefined ? {} : { schema }) };
}

/**
 * States read, by meta.json path: a meta.json is written once, before its folder is renamed into
 * place, and never changed, so one whose stamp is unchanged is not parsed again. A run reads every
 * state several times (plan, builds, publication, compaction, retention), and 30 days of 10
 * customers are 300 metas, 1.8 MB of JSON: 12–28 ms a read, parsed again each time, in every tick
 * of a long-lived process. Only the metas of a warehouse's last read are kept; each one is frozen,
 * being shared by every caller.
 */
const metaReads = new StampedReads<StateMeta>();
const parseMeta = (file: string): StateMeta => deepFreeze(StateMetaSchema.parse(JSON.parse(readFileSync(file, 'utf8'))));

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Every complete state of the warehouse, by partition key, newest first (shared, frozen objects). */
export async function readStates(layout: WarehouseLayout): Promise<Map<string, StateMeta[]>> {
  // Every meta.json is read at each run's plan (hundreds over a month, from the page cache):
  // read synchronously, they take a few ms in all, where as many promise reads are thousands of
  // round trips through libuv's pool, which DuckDB's calls share. This runs in job processes,
  // whose event loop a few ms do not hold up (docs/architecture.md: lock renewal).
  const seen = new Set<string>();
  const out = new Map<string, StateMeta[]>();
  for (const c of readdirSyncOrEmpty(layout.state)) {
    if (!c.startsWith('customer=')) continue;
    for (const d of readdirSyncOrEmpty(path.join(layout.state, c))) {
      if (!d.startsWith('date=')) continue;
      const metas: StateMeta[] = [];
      for (const id of readdirSyncOrEmpty(path.join(layout.state, c, d))) {
        if (id.startsWith(TMP_PREFIX)) continue;
        try {
          const file = path.join(layout.state, c, d, id, 'meta.json');
          metas.push(metaReads.readSync(file, parseMeta));
          seen.add(file);
        } catch {
          // Unreadable or foreign: never reused; pruned as debris.
        }
      }
      metas.sort((a, b) => (a.builtAt < b.builtAt ? 1 : a.builtAt > b.builtAt ? -1 : a.stateId < b.stateId ? 1 : -1));
      if (metas.length > 0) out.set(partitionKey(c.slice('customer='.length), d.slice('date='.length)), metas);
    }
  }
  // Metas of this warehouse's states that are gone since; another warehouse's (tests open several) stay.
  const mine = layout.state + path.sep;
  metaReads.keepOnly((file) => !file.startsWith(mine) || seen.has(file));
  return out;
}

export type RebuildReason =
  | 'no state yet'
  | 'rebuild requested'
  | 'state layout changed'
  | 'state code changed'
  | 'new files landed'
  | 'files removed or quarantined'
  | 'a file changed'
  | 'held reports came due';

export interface PartitionDecision {
  customerId: string;
  date: string;
  action: 'reuse' | 'rebuild';
  /**
   * Why it is rebuilt; when reused, `stale` for a state of other state code (same layout) that a
   * rebuild after a deployment has not replaced yet, else null.
   */
  reason: RebuildReason | 'stale' | null;
  /** The state reused (null when rebuilt). */
  stateId: string | null;
}

/**
 * Whether a partition's newest state still describes its files: the same paths, sizes and
 * modification times, built by the same state code. Otherwise, why not.
 *
 * With `staleUsable`, a partition whose states are all of other state code but whose newest one of
 * this layout describes its files is reused as `stale` (a run rebuilds such partitions a few at a
 * time, `jobs/rollup/plan.ts`); without it (a job checking for a state built meanwhile), only a
 * state of this code is reused.
 */
export function decidePartition(
  customerId: string,
  date: string,
  current: readonly StateInput[],
  states: readonly StateMeta[] | undefined,
  rebuild: boolean,
  /** The run's asOf: a layered state holding reports back until then is appended to. */
  asOf?: Date,
  staleUsable = false,
): PartitionDecision {
  const rebuildFor = (reason: RebuildReason): PartitionDecision => ({ customerId, date, action: 'rebuild', reason, stateId: null });
  if (rebuild) return rebuildFor('rebuild requested');
  const all = states ?? [];
  const fresh = all.find((m) => m.stateVersion === stateVersion());
  const readable = staleUsable ? all.find(stateReadable) : undefined;
  const newest = fresh ?? readable;
  if (!newest) return rebuildFor(all.length === 0 ? 'no state yet' : staleUsable ? 'state layout changed' : 'state code changed');
  const why = filesChanged(newest, current, asOf);
  if (why) return rebuildFor(why);
  return { customerId, date, action: 'reuse', reason: newest === fresh ? null : 'stale', stateId: newest.stateId };
}

/** Why a state no longer describes a partition's files (null: it does). */
function filesChanged(state: StateMeta, current: readonly StateInput[], asOf: Date | undefined): RebuildReason | null {
  const had = new Map(state.files.map((f) => [f.path, f]));
  const now = new Set(current.map((f) => f.path));
  for (const f of current) {
    const h = had.get(f.path);
    // A file the state's build quarantined is gone from the landing area, never back under its name.
    if (!h) return 'new files landed';
    if (h.size !== f.size || h.mtimeMs !== f.mtimeMs) return 'a file changed';
  }
  for (const f of state.files) if (!now.has(f.path)) return 'files removed or quarantined';
  if (state.pending && asOf && Date.parse(state.pending.minTs) <= asOf.getTime()) return 'held reports came due';
  return null;
}

/** One state to write: its meta, and `write(files)` that fills its (temporary) folder. */
export interface StateToWrite {
  meta: StateMeta;
  write: (files: ReturnType<typeof stateFiles>) => Promise<void>;
}

/**
 * Write a batch of states. Each is filled in a temporary folder (in turn: the writers share one
 * DuckDB session); then, for all of them at once (fsyncs of one file system overlap into few
 * journal commits), every file is fsynced, each meta.json written durably, each folder renamed
 * into place and its parent fsynced. A folder without the `.tmp-` prefix is always complete.
 */
export async function writeStates(layout: WarehouseLayout, states: readonly StateToWrite[]): Promise<void> {
  const limit = pLimit(16);
  const all = <T>(xs: readonly T[], fn: (x: T) => Promise<unknown>) => Promise.all(xs.map((x) => limit(() => fn(x))));
  const jobs = states.map(({ meta, write }) => {
    const final = stateFiles(layout, meta);
    const tmp = stateFiles(layout, { ...meta, stateId: `${TMP_PREFIX}${ownedScratchName(meta.stateId)}` });
    return { meta, write, final, tmp, parent: path.dirname(final.dir) };
  });
  try {
    for (const j of jobs) {
      await fs.mkdir(j.tmp.dir, { recursive: true });
      await j.write(j.tmp);
    }
    const files = (await Promise.all(jobs.map(async (j) => (await fs.readdir(j.tmp.dir)).map((f) => path.join(j.tmp.dir, f))))).flat();
    await all(files, fsyncFile);
    await all(jobs, (j) => writeJsonDurable(j.tmp.meta, j.meta));
    await all(jobs, (j) => fs.rename(j.tmp.dir, j.final.dir));
    await all([...new Set(jobs.map((j) => j.parent))], fsyncDir);
  } catch (err) {
    await all(jobs, (j) => fs.rm(j.tmp.dir, { recursive: true, force: true }));
    throw err;
  }
}

// Retention (pruning states no run uses any more, and the leases of runs in flight): state-retention.ts.
