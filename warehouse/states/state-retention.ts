// Retention of partition states (docs/warehouse-state.md, "Crash safety and retention"): what a
// run in flight reads is protected by its leases, and everything else that no partition uses any
// more is removed after a short grace, so that `state/` holds the states in use plus a margin that
// does not grow with the rollup cadence.
//
// A lease is a small file, `state/.leases/<runId>/<writer>.json`, naming the states a run reads:
// the plan writes the states it chose to reuse, each partition job those it built (or found built
// meanwhile). A lease lives as long as its run is in flight: the run's build folder
// (`snapshots/.build-<runId>`) is there and not debris (warehouse/snapshots/snapshot-folders.ts). So a run that
// publishes releases its leases (its folder became the snapshot, and it removes them), a run whose
// process died on this host loses them at once, and any other dead run once its folder is debris
// (SNAPSHOT_DEBRIS_GRACE_SECONDS after it was last refreshed).
//
// A state replaced by a newer one (superseded) is removed once no live lease names it and the
// state that replaced it has been there for STATE_SUPERSEDED_GRACE_SECONDS. That grace closes the
// one gap of leases: a run reads the states, then writes its lease (milliseconds later); a state
// that was the newest when it read them cannot lose that rank and be removed before the lease is
// written, since its successor must first be there for the whole grace.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pLimit from 'p-limit';
import { z } from 'zod';
import { readdirSyncOrEmpty } from '../../lib/fsx.ts';
import type { WarehouseLayout } from '../layout.ts';
import { runInFlight } from '../snapshots/index.ts';
import { deadScratch } from './dead-scratch.ts';
import { partitionKey, readStates, stateFiles, stateReadable, stateVersion, TMP_PREFIX, type StateMeta } from './state-store.ts';

const LeaseSchema = z.object({
  runId: z.string(),
  stateIds: z.array(z.string()),
  host: z.string(),
  pid: z.number().int(),
  writtenAt: z.string(),
});

function leasesRoot(layout: WarehouseLayout): string {
  return path.join(layout.state, '.leases');
}

function runLeasesDir(layout: WarehouseLayout, runId: string): string {
  return path.join(leasesRoot(layout), runId);
}

/**
 * Take a lease on `stateIds` for run `runId` (whose build folder must exist: the lease lives as
 * long as it does). A file of its own per call, so that the jobs of one run never write the same
 * file. Not fsynced: after a crash of the machine the run is not in flight any more anyway.
 */
export async function leaseStates(layout: WarehouseLayout, runId: string, stateIds: readonly string[]): Promise<void> {
  if (stateIds.length === 0) return;
  const dir = runLeasesDir(layout, runId);
  await fs.mkdir(dir, { recursive: true });
  const name = `${os.hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmp = path.join(dir, `${TMP_PREFIX}${name}`);
  const lease: z.infer<typeof LeaseSchema> = { runId, stateIds: [...stateIds], host: os.hostname(), pid: process.pid, writtenAt: new Date().toISOString() };
  await fs.writeFile(tmp, JSON.stringify(lease));
  await fs.rename(tmp, path.join(dir, `${name}.json`));
}

/** The leases of a run, released (it published, or it failed and removed its build folder). */
export async function releaseLeases(layout: WarehouseLayout, runId: string): Promise<void> {
  await fs.rm(runLeasesDir(layout, runId), { recursive: true, force: true });
}

/**
 * The states that live leases name. The leases of runs no longer in flight are removed. `graceMs`
 * is SNAPSHOT_DEBRIS_GRACE_SECONDS: how long a build folder nobody refreshes stays in flight.
 */
export async function leasedStates(layout: WarehouseLayout, graceMs: number): Promise<Set<string>> {
  const leased = new Set<string>();
  for (const runId of readdirSyncOrEmpty(leasesRoot(layout))) {
    const dir = runLeasesDir(layout, runId);
    // Read the files first, then judge the run: a lease written meanwhile belongs to a run that was
    // in flight when it was written, hence when judged.
    const files = readdirSyncOrEmpty(dir).filter((f) => f.endsWith('.json'));
    if (!(await runInFlight(layout, runId, graceMs))) {
      await fs.rm(dir, { recursive: true, force: true });
      continue;
    }
    for (const f of files) {
      try {
        for (const id of LeaseSchema.parse(JSON.parse(readFileSync(path.join(dir, f), 'utf8'))).stateIds) leased.add(id);
      } catch {
        // Unreadable: its run's other leases (and the grace) still protect it; it goes with its run.
      }
    }
  }
  return leased;
}

export interface PrunedStates {
  /** States of partitions that have no file left. */
  gone: number;
  /** States replaced by a newer one. */
  superseded: number;
  /** Half-built folders of killed builds. */
  debris: number;
}

export interface PruneOptions {
  /** State ids in use by the run that prunes. */
  keep: ReadonlySet<string>;
  /** Paths of compacted hour pieces and series blocks it used. */
  keepFiles?: ReadonlySet<string>;
  /** Partitions that have landed files. */
  livePartitions: ReadonlySet<string>;
  /** SNAPSHOT_DEBRIS_GRACE_SECONDS: states of partitions gone, half-built folders, compacted files unused, build folders not refreshed. */
  graceMs: number;
  /** STATE_SUPERSEDED_GRACE_SECONDS: how long the state that replaced a state must have been there. */
  supersededGraceMs: number;
}

/**
 * Remove the states of partitions whose files are all gone and half-built folders once older than
 * `graceMs`; states replaced by a newer one once their successor is `supersededGraceMs` old; and
 * never a state a live lease names. Snapshots are not affected: they hold hard links to the series
 * files they use.
 */
export async function pruneStates(layout: WarehouseLayout, opts: PruneOptions): Promise<PrunedStates> {
  const prune: Pruning = {
    layout,
    opts,
    now: Date.now(),
    leased: await leasedStates(layout, opts.graceMs),
    states: await readStates(layout),
    // Hundreds of partitions, each a few stats: a bounded number at a time. Folders are listed
    // synchronously, as readStates lists them.
    limit: pLimit(32),
    pruned: { gone: 0, superseded: 0, debris: 0 },
  };
  const customers: Promise<void>[] = [];
  for (const c of readdirSyncOrEmpty(layout.state)) {
    if (c.startsWith('customer=')) customers.push(pruneCustomer(prune, c));
    // Scratch of a batch build that was killed.
    else if (c.startsWith(TMP_PREFIX)) await removeOld(prune, path.join(layout.state, c), 'debris');
  }
  await Promise.all(customers);
  return prune.pruned;
}

/** One pass of pruneStates: what it protects, what it has removed so far. */
interface Pruning {
  layout: WarehouseLayout;
  opts: PruneOptions;
  now: number;
  leased: ReadonlySet<string>;
  states: ReadonlyMap<string, readonly StateMeta[]>;
  limit: ReturnType<typeof pLimit>;
  pruned: PrunedStates;
}

/** Whether `p` was modified at least `graceMs` ago (a path gone meanwhile counts as `missing` says). */
async function olderThan(prune: Pruning, p: string, graceMs: number, missing: boolean): Promise<boolean> {
  const st = await fs.stat(p).catch(() => null);
  return st === null ? missing : prune.now - st.mtimeMs >= graceMs;
}

/** Removes `p` when `old` says so, counting it as `kind`. */
async function removeIf(prune: Pruning, p: string, kind: keyof PrunedStates, old: () => Promise<boolean>): Promise<boolean> {
  if (!(await prune.limit(old))) return false;
  await fs.rm(p, { recursive: true, force: true });
  prune.pruned[kind]++;
  return true;
}

/** Removes `p` once older than the debris grace. */
function removeOld(prune: Pruning, p: string, kind: keyof PrunedStates): Promise<boolean> {
  return removeIf(prune, p, kind, () => olderThan(prune, p, prune.opts.graceMs, false));
}

/** Remove a folder left empty: listed empty, or listed again after something in it went. */
async function dropIfEmpty(dir: string, listed: readonly string[], removed: readonly boolean[]): Promise<boolean> {
  if (listed.length > 0 && !(removed.some(Boolean) && readdirSyncOrEmpty(dir).length === 0)) return false;
  await fs.rm(dir, { recursive: true, force: true });
  return true;
}

async function pruneCustomer(prune: Pruning, c: string): Promise<void> {
  const entries = readdirSyncOrEmpty(path.join(prune.layout.state, c));
  const removed = await Promise.all(entries.map((d) => (d.startsWith('date=') ? prunePartition(prune, c, d) : pruneCustomerFile(prune, c, d))));
  await dropIfEmpty(path.join(prune.layout.state, c), entries, removed);
}

/**
 * Compacted hour pieces, class units' session classes and series blocks that the run did not use,
 * and the temporary files of a killed write of one. A unit's classes are made at every run that
 * adds a layer, and replaced at every hour: like a superseded state, they go once unused for the
 * superseded grace time, so that their number does not grow with the cadence (a run links those it
 * uses into its snapshot seconds after touching them). (`hours-` files, compacted hour pieces of a
 * customer's older days, are made by no build since 2026-11-30: those that earlier builds left go
 * once unused, as before.)
 */
function pruneCustomerFile(prune: Pruning, c: string, d: string): Promise<boolean> | false {
  const file = path.join(prune.layout.state, c, d);
  if (!(d.startsWith('hours-') || d.startsWith('classes-') || d.startsWith('series-')) || prune.opts.keepFiles?.has(file)) return false;
  if (d.startsWith('classes-') && !d.includes(TMP_PREFIX)) return removeIf(prune, file, 'superseded', () => olderThan(prune, file, prune.opts.supersededGraceMs, false));
  return removeOld(prune, file, d.includes(TMP_PREFIX) ? 'debris' : 'superseded');
}

async function prunePartition(prune: Pruning, c: string, d: string): Promise<boolean> {
  const key = partitionKey(c.slice('customer='.length), d.slice('date='.length));
  const partDir = path.join(prune.layout.state, c, d);
  const metas = prune.states.get(key) ?? [];
  const live = prune.opts.livePartitions.has(key);
  const ids = readdirSyncOrEmpty(partDir);
  const removed = await Promise.all(ids.map((id) => pruneState(prune, partDir, metas, live, id)));
  return dropIfEmpty(partDir, ids, removed);
}

/** One folder of a partition: debris, a state of a partition gone, or a superseded state. */
function pruneState(prune: Pruning, partDir: string, metas: readonly StateMeta[], live: boolean, id: string): Promise<boolean> | false {
  if (prune.opts.keep.has(id) || prune.leased.has(id)) return false;
  const p = path.join(partDir, id);
  const i = metas.findIndex((m) => m.stateId === id);
  if (i < 0) return removeIf(prune, p, 'debris', async () => deadScratch(id) || (await olderThan(prune, p, prune.opts.graceMs, false)));
  if (!live) return removeOld(prune, p, 'gone');
  // The state runs use: the newest of this state code, else (a rebuild after a deployment under
  // way) the newest this code can read, stale.
  const newestFresh = metas.find((m) => m.stateVersion === stateVersion()) ?? metas.find(stateReadable);
  if (metas[i] === newestFresh) return false;
  // Superseded since its successor (the next newer state; metas are newest first) appeared.
  const successor: StateMeta | undefined = i > 0 ? metas[i - 1] : newestFresh;
  if (!successor) return removeOld(prune, p, 'superseded');
  return removeIf(prune, p, 'superseded', () => olderThan(prune, stateFiles(prune.layout, successor).meta, prune.opts.supersededGraceMs, true));
}

/**
 * Whether pruning may find a superseded state to remove (the plan's check, which spares a run the
 * walk): some partition holds a state that is not in use and whose successor was built at least
 * `supersededGraceMs` ago (built: a little before it appeared, so this may say yes a little early).
 */
export function supersededPrunable(states: ReadonlyMap<string, readonly StateMeta[]>, inUse: ReadonlySet<StateMeta>, supersededGraceMs: number, now = Date.now()): boolean {
  const before = now - supersededGraceMs;
  for (const list of states.values()) {
    for (let i = 1; i < list.length; i++) if (!inUse.has(list[i]!) && Date.parse(list[i - 1]!.builtAt) <= before) return true;
  }
  return false;
}
