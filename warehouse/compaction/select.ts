// Which partitions a compaction merges, and which of their files (docs/warehouse-state.md,
// "Compaction of small landed files"): a partition's small files once it holds enough of them.
import type { LandedFile } from '../landing.ts';
import { partitionKey, stateVersion, type StateMeta } from '../state-store.ts';

/**
 * `files` without those of a partition with a layered state that its newest state has not read:
 * a layered state takes new files as a layer (layered-state.ts), and a compacted file that holds
 * only files the state has read leaves the state as it is, where one that held a new file would
 * make the state be built whole again. The new files are compacted once a run has read them.
 */
export function readByLayeredStates(files: readonly LandedFile[], states: ReadonlyMap<string, readonly StateMeta[]>): LandedFile[] {
  const readBy = new Map<string, Set<string>>();
  for (const [key, list] of states) {
    const newest = list[0];
    if (newest?.layers && newest.stateVersion === stateVersion()) readBy.set(key, new Set(newest.files.map((f) => `${f.path}\n${f.size}\n${f.mtimeMs}`)));
  }
  return files.filter((f) => {
    const read = readBy.get(partitionKey(f.customerId, f.date));
    return !read || read.has(`${f.relPath}\n${f.size}\n${f.mtimeMs}`);
  });
}

export interface CompactionPolicy {
  /** A landed file smaller than this is small (COMPACTION_SMALL_FILE_MB). */
  smallFileBytes: number;
  /** A partition is compacted once it holds this many small files (COMPACTION_MIN_FILES). */
  minFiles: number;
}

export interface CompactionScope {
  customerId?: string;
  date?: string;
  /** Every partition with two files or more, all of its files whatever their size (`compact --force`). */
  force?: boolean;
}

/** The files to merge of each partition that is due, partition by partition. */
export function partitionsDue(files: readonly LandedFile[], policy: CompactionPolicy, scope: CompactionScope = {}): LandedFile[][] {
  const byPartition = new Map<string, LandedFile[]>();
  for (const f of files) {
    if ((scope.customerId !== undefined && f.customerId !== scope.customerId) || (scope.date !== undefined && f.date !== scope.date)) continue;
    if (scope.force !== true && f.size >= policy.smallFileBytes) continue;
    const key = partitionKey(f.customerId, f.date);
    const list = byPartition.get(key);
    if (list) list.push(f);
    else byPartition.set(key, [f]);
  }
  const least = scope.force === true ? 2 : policy.minFiles;
  return [...byPartition.keys()]
    .sort()
    .map((key) => byPartition.get(key)!)
    .filter((list) => list.length >= least);
}
