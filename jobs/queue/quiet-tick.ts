// Whether a live rollup tick has nothing to do: nothing landed since the run of the snapshot
// CURRENT names listed the landing, and that snapshot is younger than the idle refresh. Such a
// tick starts no run, so that an idle deployment on a 2 s cadence publishes one snapshot per
// ROLLUP_IDLE_SECONDS (windows still move with the clock) instead of one per tick.
import type { WarehouseLayout } from '../../warehouse/layout.ts';
import { landedSince } from '../../warehouse/landing/index.ts';
import { readCurrent } from '../../warehouse/snapshots/index.ts';

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
  return !landedSince(policy.layout, asOf - MARGIN_MS);
}
