// One job of a rollup run: rebuild the states of a batch of (customer, date) partitions from
// their landed files. Idempotent: a retry builds fresh states (the newest state
// of this run wins; the others are pruned later), never touching a published snapshot.
import { discoverLanding } from '../../warehouse/landing.ts';
import { buildPartitionStates, type PartitionToBuild } from '../../warehouse/partition-state.ts';
import { partitionKey, type StateMeta } from '../../warehouse/state-store.ts';
import type { JobDeps } from '../deps.ts';

export interface BatchResult {
  partitions: PartitionToBuild[];
  states: StateMeta[];
  durationMs: number;
}

export async function rollupPartition(
  deps: JobDeps,
  input: { runId: string; asOf: Date; partitions: PartitionToBuild[] },
): Promise<BatchResult> {
  const started = Date.now();
  const { db, layout } = deps;
  const log = deps.log.child({ runId: input.runId });
  const wanted = new Set(input.partitions.map((p) => partitionKey(p.customerId, p.date)));
  // The files as they are now: a file that landed since the plan is read too (the state records
  // exactly what it read).
  const landed = (await discoverLanding(layout)).files.filter((f) => wanted.has(partitionKey(f.customerId, f.date)));
  const states = await db.withSession((s) => buildPartitionStates({ s, layout, runId: input.runId, log }, input.partitions, landed));
  const durationMs = Date.now() - started;
  log.info(
    {
      partitions: input.partitions.length,
      reports: states.reduce((a, m) => a + m.reports, 0),
      files: states.reduce((a, m) => a + m.files.length, 0),
      ms: durationMs,
    },
    'partition states built',
  );
  return { partitions: input.partitions, states, durationMs };
}
