// The compaction job (docs/warehouse-state.md, "Compaction of small landed files"): merge the small
// files of every partition that holds enough of them, then remove the files that compacted files
// cover once no snapshot reads them. One compaction at a time in a warehouse: a second one returns
// at once (busy). Idempotent: a retry, or the next run after a crash, does what is left. Called by
// `compact`, inline by `pipeline` before it plans, and by the `compaction` job of the worker tier
// (jobs/queue/processors.ts), which finishes as skipped when it finds the lock held.
import fs from 'node:fs/promises';
import path from 'node:path';
import { discoverLanding } from '../../warehouse/landing.ts';
import { compactPartition, type CompactedPartition, type OnCompactionStep } from '../../warehouse/compaction/merge.ts';
import { retireCovered, type Retired } from '../../warehouse/compaction/retire.ts';
import { partitionsDue, readByLayeredStates, type CompactionScope } from '../../warehouse/compaction/select.ts';
import { readStates } from '../../warehouse/state-store.ts';
import { LockBusyError, takeLock, type HeldLock } from '../../lib/file-lock.ts';
import type { LandedFile } from '../../warehouse/landing.ts';
import type { JobDeps } from '../deps.ts';

export interface CompactionResult {
  /** Another compaction held the lock: nothing was done. */
  busy: boolean;
  compacted: CompactedPartition[];
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
  const result: CompactionResult = { busy: false, compacted: [], failed: 0, retired: { files: 0, records: 0 }, durationMs: 0 };
  const lock = await lockCompaction(deps);
  if (lock === null) return { ...result, busy: true };
  try {
    const landed = readByLayeredStates((await discoverLanding(deps.layout)).files, await readStates(deps.layout));
    for (const files of partitionsDue(landed, deps.config.compaction, scope)) {
      const done = await compactOne(deps, lock, files, onStep);
      if (done === 'failed') result.failed++;
      else if (done) result.compacted.push(done);
    }
    result.retired = await retireCovered(deps.layout, deps.config.snapshots.debrisGraceMs, lock);
    await onStep?.('retired');
  } finally {
    await lock.release();
  }
  result.durationMs = Date.now() - started;
  deps.log.info({ compacted: result.compacted.length, failed: result.failed, retired: result.retired, ms: result.durationMs }, 'compaction done');
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
