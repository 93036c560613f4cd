// Whether a live rollup tick has nothing to do: nothing landed since the run of the snapshot
// CURRENT names listed the landing, and that snapshot is younger than the idle refresh. Such a
// tick starts no run, so that an idle deployment on a 2 s cadence publishes one snapshot per
// ROLLUP_IDLE_SECONDS (windows still move with the clock) instead of one per tick. A snapshot that
// still used stale states (a rebuild after a deployment under way) is never quiet: each run
// rebuilds a few more of them.
import type { WarehouseLayout } from '../../warehouse/layout.ts';
import { landedSince } from '../../warehouse/landing/index.ts';
import { publishedDir, readCurrent, snapshotFiles } from '../../warehouse/snapshots/index.ts';
import { readSnapshotManifest } from '../../warehouse/snapshots/index.ts';

export interface IdlePolicy {
  layout: WarehouseLayout;
  /** ROLLUP_IDLE_SECONDS in ms: the age of CURRENT past which a tick runs anyway. */
  refreshMs: number;
}

/**
 * A landing at the asOf of CURRENT or up to this much before it may have been listed after its run
 * started or not (file system clocks and timestamps are coarse): counted as new, a run too many.
 */
const MARGIN_MS = 2000;

export async function quietTick(policy: IdlePolicy, fireTime: Date): Promise<boolean> {
  const current = await readCurrent(policy.layout).catch(() => null);
  if (!current) return false;
  const asOf = Date.parse(current.asOf);
  if (fireTime.getTime() - asOf >= policy.refreshMs) return false;
  if (landedSince(policy.layout, asOf - MARGIN_MS)) return false;
  return !(await rebuildUnderWay(policy.layout, current.snapshot));
}

/** The stale states of the last snapshot looked at (a snapshot's manifest never changes: read once). */
let lastLooked: { snapshot: string; stale: boolean } | null = null;

/** Whether a snapshot used stale states (its manifest's partitionStates.stale). */
async function rebuildUnderWay(layout: WarehouseLayout, snapshot: string): Promise<boolean> {
  if (lastLooked?.snapshot !== snapshot) {
    const manifest = await readSnapshotManifest(snapshotFiles(publishedDir(layout, snapshot)).manifest).catch(() => null);
    lastLooked = { snapshot, stale: (manifest?.partitionStates?.stale ?? 0) > 0 };
  }
  return lastLooked.stale;
}
