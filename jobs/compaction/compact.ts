// The compaction job (docs/warehouse-state.md, "Compaction of small landed files"): merge the small
// files of every partition that holds enough of them, merge the layers of layered states that are
// due (warehouse/publish/layer-merge.ts: the large merges a run's own build leaves), then remove the files
// that compacted files cover once no snapshot reads them. One compaction at a time in a warehouse: a second one returns
// at once (busy). Idempotent: a retry, or the next run after a crash, does what is left. Called by
// `compact`, inline by `pipeline` before it plans, and by the `compaction` job of the worker tier
// (jobs/queue/processors.ts), which finishes as skipped when it finds the lock held.
import fs from 'node:fs/promises';
import path from 'node:path';
import { discoverLanding } from '../../warehouse/landing/index.ts';
import { compactPartition, type CompactedPartition, type OnCompactionStep } from '../../warehouse/compaction/index.ts';
import { retireCovered, type Retired } from '../../warehouse/compaction/index.ts';
import { partitionsDue, readByLayeredStates, type CompactionScope } from '../../warehouse/compaction/index.ts';
import { readStates, type StateMeta } from '../../warehouse/states/index.ts';
import { mergePartitionLayers, type MergedLayers } from '../../warehouse/publish/index.ts';
import type { PartitionRef } from '../../warehouse/states/index.ts';
import { LockBusyError, takeLock, type HeldLock } from '../../lib/file-lock.ts';
import type { LandedFile } from '../../warehouse/landing/index.ts';
import type { JobDeps } from '../deps.ts';

export interface CompactionResult {
  /** Another compaction held the lock: nothing was done. */
  busy: boolean;
  compacted: CompactedPartition[];
  /** Layered states whose layers it merged (warehouse/publish/layer-merge.ts). */
  merged: MergedLayers[];
  /** Partitions whose compaction failed (logged); the others went on. */
  failed: number;
  retired: Retired;
  durationMs: number;
}

export async function runCompaction(
  deps: JobDeps,
  scope: CompactionScope = {},
  onStep?: OnCompactionStep,
): Promise<CompactionResult> {
  const started = Date.now();
  const result: CompactionResult = { busy: false, compacted: [], merged: [], failed: 0, retired: { files: 0, records: 0 }, durationMs: 0 };
  const lock = await lockCompaction(deps);
  if (lock === null) return { ...result, busy: true };
  try {
    const states = await readStates(deps.layout);
    const landed = readByLayeredStates((await discoverLanding(deps.layout)).files, states);
    for (const files of partitionsDue(landed, deps.config.compaction, scope)) {
      const done = await compactOne(deps, lock, files, onStep);
      if (done === 'failed') result.failed++;
      else if (done) result.compacted.push(done);
    }
    for (const p of layeredPartitions(states, scope)) {
      const done = await mergeOne(deps, p);
      if (done === 'failed') result.failed++;
      else if (done) {
        result.merged.push(done);
        await onStep?.('layers merged');
      }
    }
    result.retired = await retireCovered(deps.layout, deps.config.snapshots.debrisGraceMs, lock);
    await onStep?.('retired');
  } finally {
    await lock.release();
  }
  result.durationMs = Date.now() - started;
  deps.log.info({ compacted: result.compacted.length, merged: result.merged.length, failed: result.failed, retired: result.retired, ms: result.durationMs }, 'compaction done');
  return result;
}

/** The warehouse's compaction lock (lib/file-lock.ts), or null when a live process holds it. */
async function lockCompaction(deps: JobDeps): Promise<HeldLock | null> {
  await fs.mkdir(deps.layout.compaction, { recursive: true });
  try {
    return await takeLock(path.join(deps.layout.compaction, 'compact.lock'), { staleMs: deps.config.snapshots.lockStaleMs, waitMs: 0 });
  } catch (err) {
    if (err instanceof LockBusyError) return null;
    throw err;
  }
}

/** One partition: a failure is its own (logged), never the other partitions'. */
async function compactOne(
  deps: JobDeps,
  lock: HeldLock,
  files: readonly LandedFile[],
  onStep?: OnCompactionStep,
): Promise<CompactedPartition | null | 'failed'> {
  try {
    return await deps.db.withSession((s) => compactPartition({ s, layout: deps.layout, lock, onStep }, files));
  } catch (err) {
    deps.log.error({ err, partition: path.dirname(files[0]!.relPath) }, 'compaction of a partition failed; its files stay as they are');
    return 'failed';
  }
}

/** The partitions whose newest state is layered (recent days), in scope. */
function layeredPartitions(states: ReadonlyMap<string, readonly StateMeta[]>, scope: CompactionScope): PartitionRef[] {
  return [...states.values()]
    .map((list) => list[0])
    .filter((m): m is StateMeta => m?.layers !== undefined && m.layers.length > 1)
    .filter((m) => (scope.customerId === undefined || m.customerId === scope.customerId) && (scope.date === undefined || m.date === scope.date))
    .map((m) => ({ customerId: m.customerId, date: m.date }));
}

/** One partition's layer merge: a failure is its own (logged), never the other partitions'. */
async function mergeOne(deps: JobDeps, p: PartitionRef): Promise<MergedLayers | null | 'failed'> {
  try {
    return await deps.db.withSession((s) =>
      mergePartitionLayers(
        { s, layout: deps.layout, log: deps.log, runId: `merge-${Date.now()}`, lockStaleMs: deps.config.snapshots.lockStaleMs, maxReports: deps.config.compaction.layerMergeMaxReports },
        p,
      ),
    );
  } catch (err) {
    deps.log.error({ err, partition: `${p.customerId}/${p.date}` }, 'layer merge of a partition failed; its state stays as it is');
    return 'failed';
  }
}
