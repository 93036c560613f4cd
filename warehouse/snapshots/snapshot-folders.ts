// Immutable snapshots: a run builds its outputs in a hidden folder, publishes them by renaming it
// into place and atomically replacing the CURRENT pointer, then prunes old snapshots. A reader
// follows CURRENT and sees the previous snapshot or the new one, never a mix.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { fsyncDir, fsyncTree, readdirSyncOrEmpty, writeJsonDurable } from '../../lib/fsx.ts';
import { takeLock, type HeldLock } from '../../lib/file-lock.ts';
import { hostScratchDir, type WarehouseLayout } from '../layout.ts';
import type { Logger } from '../../lib/log.ts';
import { processAlive } from '../../lib/process.ts';
import { compactIso } from '../../lib/time.ts';
import { InternalError } from '../../lib/errors.ts';

const BUILD_PREFIX = '.build-';

/** A fresh id (for an inline run or a snapshot): the asOf, readable and sortable, and a nonce. */
export function newSnapshotId(asOf: Date): string {
  return `${compactIso(asOf)}-${randomBytes(4).toString('hex')}`;
}

/** Where each output of a snapshot sits, relative to its folder (the same while building). */
export function snapshotFiles(dir: string) {
  return {
    dir,
    manifest: path.join(dir, 'manifest.json'),
    owner: path.join(dir, 'owner.json'),
    partitionManifest: (customerId: string) => path.join(dir, 'partitions', `${customerId}.json`),
    summaries: (customerId: string) => path.join(dir, 'stream_summaries', `customer=${customerId}`, 'part-0.parquet'),
    /**
     * A customer's series: every Parquet file below its folder (one per UTC day, or per block of
     * past days: seriesDays), as a glob that read_parquet expands.
     */
    series: (customerId: string) => path.join(dir, 'stream_timeseries', `customer=${customerId}`, '**', '*.parquet'),
    /** The series file of one UTC day of a customer. */
    seriesDay: (customerId: string, date: string) =>
      path.join(dir, 'stream_timeseries', `customer=${customerId}`, `date=${date}`, 'part-0.parquet'),
    /** The series file of the UTC days first..last of a customer (a compacted block), in its first day's folder. */
    seriesDays: (customerId: string, first: string, last: string) =>
      path.join(dir, 'stream_timeseries', `customer=${customerId}`, `date=${first}`, `through-${last}.parquet`),
    /**
     * A customer's session classes at asOf (breakdowns by session dimension, filtered metrics):
     * those of the hours an edge cuts, written by the run (part-0), and those of its class units,
     * linked from the state area (part-1 on: class-units.ts). A session's part of one class may be
     * split over several files: readers add a session's rows up.
     */
    sessionClassesPart: (customerId: string, i: number) => path.join(dir, 'session_classes', `customer=${customerId}`, `part-${i}.parquet`),
    /** Every stream's quality figures of every window (unfiltered metrics). */
    streamQuality: path.join(dir, 'stream_quality.parquet'),
    summariesGlob: path.join(dir, 'stream_summaries', '*', '*.parquet'),
    seriesGlob: path.join(dir, 'stream_timeseries', '*', '**', '*.parquet'),
    platform: path.join(dir, 'platform_summaries.parquet'),
    /** Per-customer rows, added up like the platform's (telemetry metrics grouped by customer). */
    customers: path.join(dir, 'customer_summaries.parquet'),
  };
}

export type SnapshotFiles = ReturnType<typeof snapshotFiles>;

/** Every session class file (snapshotFiles: all parts) of `customers` that a snapshot folder holds. */
export function sessionClassFiles(files: SnapshotFiles, customers: readonly string[]): string[] {
  return customers.flatMap((c) => {
    const dir = path.dirname(files.sessionClassesPart(c, 0));
    return readdirSyncOrEmpty(dir)
      .filter((n) => /^part-\d+\.parquet$/.test(n))
      .map((n) => path.join(dir, n));
  });
}

export function buildDir(layout: WarehouseLayout, runId: string): string {
  return path.join(layout.snapshots, `${BUILD_PREFIX}${runId}`);
}

const OwnerSchema = z.object({
  host: z.string(),
  pid: z.number().int().nullable(),
  startedAt: z.string(),
  /** Refreshed by the jobs of a distributed run while they work: the folder is alive. */
  refreshedAt: z.string().optional(),
});

/**
 * Create (or reopen, for a retried flow) the build folder of a run. `pid` null means the folder
 * belongs to a distributed run, not to this process, and only its age makes it debris.
 */
export async function beginBuild(layout: WarehouseLayout, runId: string, pid: number | null): Promise<SnapshotFiles> {
  const files = snapshotFiles(buildDir(layout, runId));
  await fs.mkdir(files.dir, { recursive: true });
  await writeJsonDurable(files.owner, { host: os.hostname(), pid, startedAt: new Date().toISOString() });
  return files;
}

/**
 * Mark a run's build folder as alive (its jobs call this while they work), so that a run longer
 * than SNAPSHOT_DEBRIS_GRACE_SECONDS is not removed as debris by another run's plan.
 */
export async function keepBuildAlive(layout: WarehouseLayout, runId: string): Promise<void> {
  const files = snapshotFiles(buildDir(layout, runId));
  let owner: z.infer<typeof OwnerSchema>;
  try {
    owner = OwnerSchema.parse(JSON.parse(await fs.readFile(files.owner, 'utf8')));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // published or gone: nothing to keep
    throw err;
  }
  await writeJsonDurable(files.owner, { ...owner, refreshedAt: new Date().toISOString() });
}

/**
 * Whether the build folder of run `runId` belongs to a run still in progress: it exists, its owner
 * record is readable, and it was started or refreshed (partition jobs refresh it) within
 * `graceMs`. What debris cleanup would remove is not live.
 */
export async function buildLive(layout: WarehouseLayout, runId: string, graceMs: number): Promise<boolean> {
  try {
    const owner = OwnerSchema.parse(JSON.parse(await fs.readFile(snapshotFiles(buildDir(layout, runId)).owner, 'utf8')));
    const last = Math.max(Date.parse(owner.startedAt), owner.refreshedAt ? Date.parse(owner.refreshedAt) : 0);
    return Date.now() - last <= graceMs;
  } catch {
    return false;
  }
}

export const CurrentPointerSchema = z.object({
  snapshot: z.string().regex(/^[A-Za-z0-9TZ_-]+$/),
  asOf: z.string(),
  publishedAt: z.string(),
});
export type CurrentPointer = z.infer<typeof CurrentPointerSchema>;

/**
 * A publication file (CURRENT, PUBLISHED, a snapshot's manifest) exists but cannot be read or does
 * not hold what it must: not the same thing as "nothing published yet", and named by its path.
 */
export class SnapshotUnreadableError extends InternalError {
  override name = 'SnapshotUnreadableError';
  override readonly errorCode = 'snapshot_unreadable';
  constructor(
    readonly file: string,
    readonly why: string,
  ) {
    super(`${file} cannot be read: ${why}`);
  }
}

function whyUnreadable(err: unknown): string {
  if (err instanceof z.ZodError) return `unexpected content (${err.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; ')})`;
  if (err instanceof SyntaxError) return `not JSON (${err.message})`;
  return err instanceof Error ? err.message : String(err);
}

/** Read and validate a small JSON file; null when it does not exist, SnapshotUnreadableError when it is damaged. */
async function readJsonFile<T>(file: string, schema: z.ZodType<T>): Promise<T | null> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SnapshotUnreadableError(file, whyUnreadable(err));
  }
  try {
    return schema.parse(JSON.parse(text));
  } catch (err) {
    throw new SnapshotUnreadableError(file, whyUnreadable(err));
  }
}

/**
 * The published snapshot, or null when nothing was published yet (no CURRENT). A CURRENT that
 * exists but is damaged throws SnapshotUnreadableError: only a missing file means "nothing".
 */
export async function readCurrent(layout: WarehouseLayout): Promise<CurrentPointer | null> {
  const pointer = await readJsonFile(layout.currentPointer, CurrentPointerSchema);
  if (pointer && !Number.isFinite(Date.parse(pointer.asOf))) {
    throw new SnapshotUnreadableError(layout.currentPointer, `asOf ${JSON.stringify(pointer.asOf)} is not a date`);
  }
  return pointer;
}

export function publishedDir(layout: WarehouseLayout, snapshot: string): string {
  return path.join(layout.snapshots, snapshot);
}

export interface PublishOutcome {
  snapshot: string;
  /** False when a snapshot with a later asOf was published meanwhile; this one is then discarded. */
  published: boolean;
  dir: string;
  /** Snapshot folders removed by retention (and leftovers of runs that died while publishing). */
  pruned: string[];
}

const HistorySchema = z.array(z.string());

function historyFile(layout: WarehouseLayout): string {
  return path.join(layout.snapshots, 'PUBLISHED');
}

/** Ids of published snapshots, oldest first. A damaged PUBLISHED throws SnapshotUnreadableError. */
export async function readHistory(layout: WarehouseLayout): Promise<string[]> {
  return (await readJsonFile(historyFile(layout), HistorySchema)) ?? [];
}

/** The asOf and creation time a snapshot folder's manifest records, or null when it has none readable. */
async function snapshotStamp(layout: WarehouseLayout, snapshot: string): Promise<{ asOf: string; createdAt: string } | null> {
  try {
    const m = z.object({ asOf: z.string(), createdAt: z.string() }).parse(JSON.parse(await fs.readFile(snapshotFiles(publishedDir(layout, snapshot)).manifest, 'utf8')));
    return Number.isFinite(Date.parse(m.asOf)) ? m : null;
  } catch {
    return null;
  }
}

/**
 * The history, read before anything moves: a damaged PUBLISHED is rebuilt from the snapshot
 * folders that hold a readable manifest (by asOf, then creation), with a warning naming the file;
 * and the snapshot CURRENT names is always in it (a publisher killed between the swap and the
 * record of the history left it out; retention must never take it).
 */
export async function readHistoryRepaired(layout: WarehouseLayout, current: CurrentPointer | null, log: Logger | undefined): Promise<string[]> {
  let history: string[];
  try {
    history = await readHistory(layout);
  } catch (err) {
    if (!(err instanceof SnapshotUnreadableError)) throw err;
    const stamped: { id: string; asOf: number; createdAt: number }[] = [];
    for (const id of await listSnapshots(layout)) {
      const st = await snapshotStamp(layout, id);
      if (st) stamped.push({ id, asOf: Date.parse(st.asOf), createdAt: Date.parse(st.createdAt) || 0 });
    }
    stamped.sort((a, b) => a.asOf - b.asOf || a.createdAt - b.createdAt || a.id.localeCompare(b.id));
    history = stamped.map((x) => x.id);
    log?.warn({ file: err.file, why: err.why, rebuilt: history.length }, 'the snapshot history file is damaged; rebuilt it from the snapshot folders');
    await writeJsonDurable(historyFile(layout), history);
  }
  if (current && !history.includes(current.snapshot)) {
    history = [...history, current.snapshot];
    await writeJsonDurable(historyFile(layout), history);
  }
  return history;
}

/**
 * CURRENT for a publisher: a damaged one is replaced by the latest snapshot of the history (the
 * swap about to happen repairs the file), with a warning naming it, rather than read as "nothing
 * published" (which would let any asOf through) or blocking every run until someone edits it.
 */
async function readCurrentForPublish(layout: WarehouseLayout, log: Logger | undefined): Promise<CurrentPointer | null> {
  try {
    return await readCurrent(layout);
  } catch (err) {
    if (!(err instanceof SnapshotUnreadableError)) throw err;
    let history: string[] = [];
    try {
      history = await readHistory(layout);
    } catch {
      history = await listSnapshots(layout);
    }
    let best: CurrentPointer | null = null;
    for (const id of history) {
      const st = await snapshotStamp(layout, id);
      if (st && (!best || Date.parse(st.asOf) >= Date.parse(best.asOf))) best = { snapshot: id, asOf: st.asOf, publishedAt: st.createdAt };
    }
    log?.warn({ file: err.file, why: err.why, assumed: best?.snapshot ?? null }, 'CURRENT is damaged; taking the latest published snapshot as current');
    return best;
  }
}

/**
 * Publish a finished build: rename its folder into place, read (and repair) the publication state
 * before anything moves, let `beforeSwap` prepare what must follow the pointer (the analyst
 * catalog), replace CURRENT, record the history, then `afterSwap` (install the catalog), and apply
 * retention. All under one lock, so concurrent publishers never interleave and an older asOf never
 * replaces a newer one. A kill at any step leaves CURRENT on a complete snapshot; `reconcile`
 * (called first, under the lock) brings whatever follows CURRENT back in line with it.
 */
export async function publishBuild(
  layout: WarehouseLayout,
  runId: string,
  snapshot: string,
  asOf: Date,
  opts: {
    keep: number;
    /** A lock not refreshed for this long belongs to a dead publisher and is taken over. */
    lockStaleMs: number;
    beforeSwap?: (dir: string) => Promise<void>;
    afterSwap?: (dir: string) => Promise<void>;
    /** Bring what follows CURRENT (the catalog) in line with it, after an earlier publisher died midway. */
    reconcile?: (current: CurrentPointer) => Promise<void>;
    /** Replace CURRENT even when it has a later asOf (the way back from an asOf in the future). */
    replaceCurrent?: boolean;
    log?: Logger;
  },
): Promise<PublishOutcome> {
  await fs.mkdir(layout.snapshots, { recursive: true });
  const lock = await lockPublication(layout, opts.lockStaleMs);
  try {
    const dir = publishedDir(layout, snapshot);
    const from = buildDir(layout, runId);
    await fsyncTree(from);
    await fs.rm(path.join(from, 'owner.json'), { force: true });
    lock.assertHeld();
    await fs.rename(from, dir);
    await fsyncDir(layout.snapshots);

    // Read before the swap: a damaged file is repaired or named now, never after CURRENT moved.
    const current = await readCurrentForPublish(layout, opts.log);
    let history = await readHistoryRepaired(layout, current, opts.log);
    let published = false;
    const replaces = !current || Date.parse(current.asOf) <= asOf.getTime() || opts.replaceCurrent === true;
    // When this publish moves CURRENT, its own catalog follows; otherwise mend the current one's.
    if (current && !replaces && opts.reconcile) await opts.reconcile(current);
    if (replaces) {
      await opts.beforeSwap?.(dir);
      const pointer: CurrentPointer = { snapshot, asOf: asOf.toISOString(), publishedAt: new Date().toISOString() };
      lock.assertHeld();
      await writeJsonDurable(layout.currentPointer, pointer);
      history = [...history.filter((s) => s !== snapshot), snapshot];
      await writeJsonDurable(historyFile(layout), history);
      await opts.afterSwap?.(dir);
      published = true;
    }
    // Another publisher that took the lock over may be between its rename and its swap: leave
    // retention to the next publisher rather than remove its folder.
    const pruned = lock.held() ? await prune(layout, opts.keep) : [];
    return { snapshot, published, dir, pruned };
  } finally {
    await lock.release();
  }
}

/** How long a publisher waits for another one to finish. */
const PUBLISH_WAIT_MS = 60_000;

/**
 * The publish lock: one publisher (or `snapshots use`) at a time. Renewed every second while held:
 * a holder killed on this host is taken over at once, one on another host after `lockStaleMs`.
 */
export async function lockPublication(layout: WarehouseLayout, lockStaleMs: number): Promise<HeldLock> {
  await fs.mkdir(layout.snapshots, { recursive: true });
  return takeLock(path.join(layout.snapshots, 'publish.lock'), { staleMs: lockStaleMs, waitMs: PUBLISH_WAIT_MS });
}

/**
 * Point CURRENT at an already published snapshot (`snapshots use <id>`): the way back from a
 * snapshot published with a wrong asOf. Under the publish lock; `beforeSwap`/`afterSwap` as in
 * publishBuild. The chosen snapshot becomes the latest of the history, so retention keeps it.
 */
export async function useSnapshot(
  layout: WarehouseLayout,
  snapshot: string,
  opts: { lockStaleMs: number; beforeSwap?: (dir: string) => Promise<void>; afterSwap?: (dir: string) => Promise<void>; log?: Logger },
): Promise<CurrentPointer> {
  if (!CurrentPointerSchema.shape.snapshot.safeParse(snapshot).success) throw new SnapshotUnreadableError(snapshot, 'not a snapshot id');
  const lock = await lockPublication(layout, opts.lockStaleMs);
  try {
    const dir = publishedDir(layout, snapshot);
    const stamp = await snapshotStamp(layout, snapshot);
    if (!stamp) throw new SnapshotUnreadableError(snapshotFiles(dir).manifest, 'no such snapshot, or its manifest cannot be read');
    const current = await readCurrentForPublish(layout, opts.log);
    const history = await readHistoryRepaired(layout, current, opts.log);
    await opts.beforeSwap?.(dir);
    const pointer: CurrentPointer = { snapshot, asOf: stamp.asOf, publishedAt: new Date().toISOString() };
    lock.assertHeld();
    await writeJsonDurable(layout.currentPointer, pointer);
    await writeJsonDurable(historyFile(layout), [...history.filter((s) => s !== snapshot), snapshot]);
    await opts.afterSwap?.(dir);
    return pointer;
  } finally {
    await lock.release();
  }
}

/** Every published snapshot folder with its asOf, oldest first by the history, and which is current. */
export async function listPublished(layout: WarehouseLayout): Promise<{ snapshot: string; asOf: string | null; current: boolean; inHistory: boolean }[]> {
  const current = await readCurrent(layout).catch(() => null);
  const history = await readHistory(layout).catch(() => [] as string[]);
  const folders = await listSnapshots(layout);
  const ids = [...history.filter((h) => folders.includes(h)), ...folders.filter((f) => !history.includes(f))];
  const out = [];
  for (const id of ids) {
    const st = await snapshotStamp(layout, id);
    out.push({ snapshot: id, asOf: st?.asOf ?? null, current: current?.snapshot === id, inHistory: history.includes(id) });
  }
  return out;
}

/** Snapshot folders present (published or not), by name. */
export async function listSnapshots(layout: WarehouseLayout): Promise<string[]> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await fs.readdir(layout.snapshots, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !e.name.endsWith('.lock'))
    .map((e) => e.name)
    .sort();
}

/**
 * Pre-rendered pilot reports live as long as their snapshot, except each customer's latest
 * published folder (the newest one with its `reports.json`), which stays until a newer one is
 * published: what the API serves as a stream's latest published report (`source=published`) while
 * live rollups publish snapshots every few seconds.
 */
async function pruneReports(layout: WarehouseLayout, kept: ReadonlySet<string>): Promise<void> {
  const folders = (await fs.readdir(layout.reports).catch(() => [] as string[])).sort().reverse();
  const latest = new Set<string>();
  /** Per folder of a pruned snapshot, the customers whose latest published folder it holds. */
  const latestOf = new Map<string, string[]>();
  for (const s of folders) {
    for (const customer of await fs.readdir(path.join(layout.reports, s)).catch(() => [] as string[])) {
      if (customer.startsWith('.') || latest.has(customer)) continue;
      const published = await fs.access(path.join(layout.reports, s, customer, 'reports.json')).then(() => true, () => false);
      if (!published) continue;
      latest.add(customer);
      if (!kept.has(s)) latestOf.set(s, [...(latestOf.get(s) ?? []), customer]);
    }
  }
  for (const s of folders) {
    if (kept.has(s)) continue;
    const keepHere = latestOf.get(s) ?? [];
    if (keepHere.length === 0) {
      await fs.rm(path.join(layout.reports, s), { recursive: true, force: true });
      continue;
    }
    for (const name of await fs.readdir(path.join(layout.reports, s)).catch(() => [] as string[])) {
      if (!keepHere.includes(name)) await fs.rm(path.join(layout.reports, s, name), { recursive: true, force: true });
    }
  }
}

/**
 * Keep the `keep` latest published snapshots (the current one always) and remove every other
 * snapshot folder: older ones, superseded ones, and leftovers of publishers that died between
 * renaming their folder and swapping the pointer, with the pre-rendered reports of each (but each
 * customer's latest published ones: pruneReports). Runs
 * under the publish lock.
 */
async function prune(layout: WarehouseLayout, keep: number): Promise<string[]> {
  let current: CurrentPointer | null;
  let history: string[];
  try {
    current = await readCurrent(layout);
    history = await readHistory(layout);
  } catch (err) {
    // Nothing is removed while the pointer or the history is unknown: they could name any folder.
    if (err instanceof SnapshotUnreadableError) return [];
    throw err;
  }
  const kept = new Set(history.slice(-keep));
  if (current) kept.add(current.snapshot);
  const doomed = (await listSnapshots(layout)).filter((s) => !kept.has(s));
  for (const s of doomed) await fs.rm(publishedDir(layout, s), { recursive: true, force: true });
  await pruneReports(layout, kept);
  // Catalogs built by a publisher that died before installing theirs.
  for (const f of await fs.readdir(layout.root).catch(() => [] as string[])) {
    if (f.startsWith(`${path.basename(layout.catalog)}.tmp-`)) await fs.rm(path.join(layout.root, f), { force: true });
  }
  if (history.some((s) => !kept.has(s))) {
    await writeJsonDurable(historyFile(layout), history.filter((s) => kept.has(s)));
  }
  return doomed;
}

/**
 * Whether a build folder is debris: its process on this host is gone, or it is older than
 * `graceMs` (from its start or last refresh) whoever owns it, or it is not there.
 */
async function buildDead(dir: string, graceMs: number, host = os.hostname(), now = Date.now()): Promise<boolean> {
  try {
    const owner = OwnerSchema.parse(JSON.parse(await fs.readFile(path.join(dir, 'owner.json'), 'utf8')));
    const age = now - Math.max(Date.parse(owner.startedAt), owner.refreshedAt ? Date.parse(owner.refreshedAt) : 0);
    const orphaned = owner.host === host && owner.pid !== null && !processAlive(owner.pid);
    return orphaned || age > graceMs;
  } catch {
    // No readable owner: a folder whose creation was cut short (or gone); judge it by its age.
    const stat = await fs.stat(dir).catch(() => null);
    return stat === null || now - stat.mtimeMs > graceMs;
  }
}

/**
 * Whether run `runId` is in flight: its build folder is there and not debris (what cleanDebris
 * would leave). A published run's folder has been renamed: not in flight.
 */
export async function runInFlight(layout: WarehouseLayout, runId: string, graceMs: number): Promise<boolean> {
  return !(await buildDead(buildDir(layout, runId), graceMs));
}

/**
 * Remove what dead runs left behind: build folders whose process on this host is gone, or that are
 * older than `graceMs` whoever owns them, and scratch folders (`<kind>-<pid>-…`, `duckdb-<pid>`) of
 * dead processes of this host. Other hosts' scratch is theirs to judge: their pids are not ours.
 */
export async function cleanDebris(layout: WarehouseLayout, graceMs: number, log: Logger): Promise<string[]> {
  const removed: string[] = [];
  const host = os.hostname();
  const now = Date.now();

  const builds = await fs.readdir(layout.snapshots).catch(() => [] as string[]);
  for (const name of builds.filter((n) => n.startsWith(BUILD_PREFIX))) {
    const dir = path.join(layout.snapshots, name);
    if (await buildDead(dir, graceMs, host, now)) {
      await fs.rm(dir, { recursive: true, force: true });
      removed.push(path.relative(layout.root, dir));
    }
  }

  const dir = hostScratchDir(layout);
  for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
    const m = /^[a-z]+-(\d+)-[0-9a-f]+$/.exec(name) ?? /^duckdb-(\d+)$/.exec(name);
    if (m && Number(m[1]) !== process.pid && !processAlive(Number(m[1]))) {
      await fs.rm(path.join(dir, name), { recursive: true, force: true });
      removed.push(path.relative(layout.root, path.join(dir, name)));
    }
  }
  for (const r of removed) log.info({ path: r }, 'removed debris of a dead run');
  return removed;
}
