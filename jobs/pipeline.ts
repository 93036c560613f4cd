// The inline rollup run (cli pipeline, npm start): plan, rebuild the partition states that need
// it, combine and publish — the same job functions that the BullMQ flow runs on workers, called
// in one process.
import fs from 'node:fs/promises';
import pLimit from 'p-limit';
import { planRollup } from './rollup/plan.ts';
import { rollupPartition } from './rollup/partition.ts';
import { publishRollup, type PublishResult } from './rollup/publish.ts';
import { buildDir, newSnapshotId } from '../warehouse/snapshots.ts';
import type { JobDeps } from './deps.ts';
import type { StateMeta } from '../warehouse/state-store.ts';

export interface PipelineProgress {
  done: number;
  total: number;
  step: string;
}

export interface PipelineResult extends PublishResult {
  runId: string;
}

export async function runPipeline(
  deps: JobDeps,
  /** rebuild: recompute every partition state (the snapshot must come out the same). */
  opts: { asOf: Date; rebuild?: boolean },
  onProgress: (p: PipelineProgress) => void = () => {},
): Promise<PipelineResult> {
  const startedAt = Date.now();
  const runId = newSnapshotId(opts.asOf);
  const plan = await planRollup(deps, { runId, asOf: opts.asOf, ownerPid: process.pid, rebuild: opts.rebuild === true, batching: 'merged' });
  const total = plan.batches.length + 1;
  let done = 0;
  onProgress({ done, total, step: 'planned' });
  try {
    const limit = pLimit(deps.config.partitionConcurrency);
    const built: StateMeta[] = [];
    await Promise.all(
      plan.batches.map((batch) =>
        limit(async () => {
          const r = await rollupPartition(deps, { runId, asOf: opts.asOf, partitions: batch.partitions });
          built.push(...r.states);
          onProgress({ done: ++done, total, step: `${batch.partitions.length} partitions built` });
        }),
      ),
    );
    const result = await publishRollup(deps, {
      runId,
      asOf: opts.asOf,
      customers: plan.customers,
      misplaced: plan.misplaced,
      decisions: plan.decisions,
      knownStates: [...plan.reused, ...built],
      pruneNeeded: plan.pruneNeeded,
      startedAt,
    });
    onProgress({ done: ++done, total, step: 'published' });
    return { ...result, runId };
  } catch (err) {
    // Our own build folder is debris now; a run killed outright leaves it to the next run.
    await fs.rm(buildDir(deps.layout, runId), { recursive: true, force: true });
    throw err;
  }
}
