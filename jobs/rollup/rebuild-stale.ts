// Stale partition states rebuilt outside any run (after a deployment that changed a state's SQL,
// same layout: docs/warehouse-state.md, "After a deployment"), for `start`'s background rebuild
// (jobs/live-rebuild.ts). The stale partitions are those a run's plan would reuse as `stale`, in
// the order a run's budget takes them (plan.ts `staleInOrder`); a few at a time are rebuilt by the
// partition job of the runs (partition.ts: under their partition locks, from their files as they
// are then; a state of this code built meanwhile for those files is kept, not built again). A state so
// built joins no snapshot by itself: the next run's plan finds it (it describes the partition's
// files) and reuses it instead of the stale one, so every snapshot combines, per partition, either
// the stale state or the rebuilt one, each exact for its own SQL. Killed mid-way, a build leaves a
// `.tmp-` folder that is never read (debris); what is still stale is rebuilt by the next pass.
import { randomBytes } from 'node:crypto';
import { discoverLanding } from '../../warehouse/landing/index.ts';
import { decidePartition, partitionKey, readStates, stateInput, type PartitionToBuild, type StateMeta } from '../../warehouse/states/index.ts';
import { compactIso } from '../../lib/time.ts';
import type { JobDeps } from '../deps.ts';
import { rollupPartition } from './partition.ts';
import { filesByPartition, staleInOrder } from './plan.ts';
import { countStaleRebuilt } from './rebuild-metrics.ts';

/** A stale partition and the reports its stale state holds (what its rebuild reads, about). */
export interface StalePartition extends PartitionToBuild {
  reports: number;
}

/** The partitions whose state a run would reuse stale now, in the order they are rebuilt (asOf's date first, then customer by customer, newest first). */
export async function stalePartitions(deps: Pick<JobDeps, 'layout'>, asOf: Date): Promise<StalePartition[]> {
  const { files } = await discoverLanding(deps.layout);
  const byPartition = filesByPartition(files);
  const states = await readStates(deps.layout);
  const decided = [...byPartition.entries()].map(([key, list]) =>
    decidePartition(list[0]!.customerId, list[0]!.date, list.map((f) => stateInput(f)), states.get(key), false, asOf, true),
  );
  return staleInOrder(decided, asOf).map(({ customerId, date, stateId }) => ({
    customerId,
    date,
    reports: states.get(partitionKey(customerId, date))?.find((m) => m.stateId === stateId)?.reports ?? 0,
  }));
}

export interface StaleRebuilt {
  /** The states built (a partition with one of this code for its files as they are, built meanwhile by a run, has none). */
  states: StateMeta[];
  ms: number;
}

/** Rebuild stale partitions by this code in one job, outside any run (their states' runId: `rebuild-<asOf>-<random>`). */
export async function rebuildStalePartitions(deps: JobDeps, partitions: readonly PartitionToBuild[], asOf: Date): Promise<StaleRebuilt> {
  const started = performance.now();
  const runId = `rebuild-${compactIso(asOf)}-${randomBytes(3).toString('hex')}`;
  const r = await rollupPartition(deps, { runId, asOf, partitions: partitions.map(({ customerId, date }) => ({ customerId, date })) });
  countStaleRebuilt(r.states.length);
  return { states: r.states, ms: performance.now() - started };
}
