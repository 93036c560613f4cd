// The rebuild after a deployment that changed a state's SQL, as metrics of the process that runs
// the rollups (`start`, a worker): the stale states its latest published run still used, and the
// stale states it rebuilt, in its runs or (`start`) in the background (docs/warehouse-state.md, "After a deployment").
import client from 'prom-client';
import { registry } from '../../lib/metrics.ts';
import type { SnapshotManifest } from '../../warehouse/snapshots/index.ts';
import type { RebuildReason } from '../../warehouse/states/index.ts';

/** The reason of a stale partition rebuilt within a run's budget (plan.ts `staleToRebuild`). */
export const STALE_REBUILT_REASON = 'state code changed' satisfies RebuildReason;

const staleLeft = new client.Gauge({
  name: 'p2ptel_rollup_stale_states',
  help: "Partition states of other state code (a deployment changed a state's SQL) that the latest run published by this process still used: 0 once the rebuild is over (absent before a run)",
  registers: [registry],
});

const staleRebuilt = new client.Counter({
  name: 'p2ptel_rollup_stale_rebuilt_total',
  help: "Stale partition states (other state code) rebuilt by this process: by its runs, within ROLLUP_REBUILD_BUDGET a run, or (`start`) by its background rebuild",
  registers: [registry],
});

/** Count a published run's part of the rebuild. */
export function countRebuild(manifest: SnapshotManifest): void {
  const ps = manifest.partitionStates;
  if (!ps) return;
  staleLeft.set(ps.stale ?? 0);
  staleRebuilt.inc(ps.reasons[STALE_REBUILT_REASON] ?? 0);
}

/** Count stale states rebuilt outside any run (`start`'s background rebuild, rebuild-stale.ts). */
export function countStaleRebuilt(n: number): void {
  staleRebuilt.inc(n);
}
