// The inline rollup run (cli pipeline, npm start): compact the partitions that hold many small
// files, plan, rebuild the partition states that need it, combine and publish — the same job
// functions that the BullMQ flow runs on workers, called in one process. One run per asOf at a
// time (warehouse/snapshots/run-lock.ts).
import fs from 'node:fs/promises';
import pLimit from 'p-limit';
import { planRollup } from './rollup/plan.ts';
import { rollupPartition, withReused } from './rollup/partition.ts';
import { publishRollup, type PublishResult } from './rollup/publish.ts';
import { buildDir, buildLive, newSnapshotId } from '../warehouse/snapshots/index.ts';
import type { JobDeps } from './deps.ts';
import { assertAsOfNotAhead, compactIso } from '../lib/time.ts';
import { lockRun, RunAlreadyRunningError } from '../warehouse/snapshots/index.ts';
import type { StateMeta } from '../warehouse/states/index.ts';
import { runCompaction, type CompactionResult } from './compaction/compact.ts';
import { leaseStates, releaseLeases } from '../warehouse/states/index.ts';

export interface PipelineProgress {
  done: number;
  total: number;
  step: string;
}

export interface PipelineResult extends PublishResult {
  runId: string;
  /** The compaction before the plan; null when skipped or failed (the run goes on without it). */
  compaction: CompactionResult | null;
}

export interface PipelineOptions {
  asOf: Date;
  /** Recompute every partition state (the snapshot must come out the same). */
  rebuild?: boolean;
  /** Publish even over a CURRENT with a later asOf (`pipeline --replace-current`). */
  replaceCurrent?: boolean;
  /** False: no compaction of small files before the plan (`pipeline --no-compact`). */
  compact?: boolean;
  /** False: rebuild no stale state in this run (`start`, whose background rebuild does: jobs/live-rebuild.ts). */
  rebuildStale?: boolean;
}

export async function runPipeline(
  deps: JobDeps,
  opts: PipelineOptions,
  onProgress: (p: PipelineProgress) => void = () => {},
): Promise<PipelineResult> {
  assertAsOfNotAhead(opts.asOf, deps.config.snapshots.asOfMaxSkewMs);
  const unlock = await lockRun(deps.layout, opts.asOf, deps.config.snapshots.lockStaleMs);
  try {
    // A distributed run of this asOf on the workers (its build folder is named by the compact
    // asOf, jobs/queue/names.ts) that is still alive: the same snapshot must not be computed twice.
    if (await buildLive(deps.layout, compactIso(opts.asOf), deps.config.snapshots.debrisGraceMs)) {
      throw new RunAlreadyRunningError(opts.asOf);
    }
    return await runLocked(deps, opts, onProgress);
  } finally {
    await unlock();
  }
}

async function runLocked(
  deps: JobDeps,
  opts: PipelineOptions,
  onProgress: (p: PipelineProgress) => void,
): Promise<PipelineResult> {
  const startedAt = Date.now();
  const runId = newSnapshotId(opts.asOf);
  const compaction = opts.compact === false ? null : await compactBeforePlan(deps);
  const plan = await planRollup(deps, { runId, asOf: opts.asOf, ownerPid: process.pid, rebuild: opts.rebuild === true, batching: 'merged', rebuildStale: opts.rebuildStale !== false });
  // The states this run reads are leased until it publishes (warehouse/states/state-retention.ts).
  await leaseStates(deps.layout, runId, plan.reused.map((m) => m.stateId));
  const total = plan.batches.length + 1;
  let done = 0;
  onProgress({ done, total, step: 'planned' });
  try {
    const limit = pLimit(deps.config.partitionConcurrency);
    // On a failure, start no more partitions and wait for those running to stop before the build
    // folder is removed: one still running would otherwise re-create it as debris.
    let failure: { reason: unknown } | null = null;
    const built: StateMeta[] = [];
    const reused: StateMeta[] = [];
    await Promise.allSettled(
      plan.batches.map((batch) =>
        limit(async () => {
          if (failure) return;
          try {
            const r = await rollupPartition(deps, { runId, asOf: opts.asOf, partitions: batch.partitions, rebuild: opts.rebuild === true });
            await leaseStates(deps.layout, runId, [...r.states, ...r.reused].map((m) => m.stateId));
            built.push(...r.states);
            reused.push(...r.reused);
          } catch (err) {
            failure ??= { reason: err };
            return;
          }
          onProgress({ done: ++done, total, step: `${batch.partitions.length} partitions built` });
        }),
      ),
    );
    if (failure) throw (failure as { reason: unknown }).reason;
    const result = await publishRollup(deps, {
      runId,
      asOf: opts.asOf,
      customers: plan.customers,
      misplaced: plan.misplaced,
      decisions: withReused(plan.decisions, reused),
      knownStates: [...plan.reused, ...built, ...reused],
      pruneNeeded: plan.pruneNeeded,
      startedAt,
      replaceCurrent: opts.replaceCurrent === true,
    });
    onProgress({ done: ++done, total, step: 'published' });
    return { ...result, runId, compaction };
  } catch (err) {
    // Our own build folder is debris now; a run killed outright leaves it to the next run.
    await fs.rm(buildDir(deps.layout, runId), { recursive: true, force: true });
    await releaseLeases(deps.layout, runId);
    throw err;
  }
}

/** The compaction job, inline: a failure of it is logged, and the run goes on over the files as they are. */
async function compactBeforePlan(deps: JobDeps): Promise<CompactionResult | null> {
  try {
    return await runCompaction(deps);
  } catch (err) {
    deps.log.error({ err }, 'compaction before the run failed; the run goes on without it');
    return null;
  }
}
