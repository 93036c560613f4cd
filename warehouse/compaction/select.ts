// Which partitions a compaction merges, and which of their files (docs/warehouse-state.md,
// "Compaction of small landed files"): a partition's small files once it holds enough of them.
import type { LandedFile } from '../landing.ts';
import { partitionKey } from '../state-store.ts';

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
