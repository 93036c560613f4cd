// Which partitions a compaction merges, and which of their files (docs/warehouse-state.md,
// "Compaction of small landed files"): a partition's small files, by size tier, once a tier holds enough of them.
import type { LandedFile } from '../landing/index.ts';
import { partitionKey, stateVersion, type StateMeta } from '../states/index.ts';

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
  /** A size tier of a partition's small files is merged once it holds this many (COMPACTION_MIN_FILES). */
  minFiles: number;
}

export interface CompactionScope {
  customerId?: string;
  date?: string;
  /** Every partition with two files or more, all of its files whatever their size (`compact --force`). */
  force?: boolean;
}

/**
 * Small files are merged by size tier, as size-tiered compaction does: a file of `TIER_BASE_BYTES`
 * or less is of tier 0, and each tier above holds files up to `TIER_RATIO` times larger. Merging
 * only files of one tier keeps a compacted file from being merged again at every compaction (a
 * compacted file below the small size used to be, with each new batch of small files: on the live
 * benchmark the merged file of one partition grew 2, 4, 6, … 17 MB, rewritten at each step, and
 * the merge took 5 s of a 2-second tick). A row is now rewritten once per tier it climbs.
 */
const TIER_BASE_BYTES = 256 * 1024;
const TIER_RATIO = 4;

/** The size tier of a small file (0 for TIER_BASE_BYTES or less). */
export function sizeTier(bytes: number): number {
  let tier = 0;
  for (let limit = TIER_BASE_BYTES; bytes > limit; limit *= TIER_RATIO) tier++;
  return tier;
}

/**
 * The files of each merge that is due, partition by partition: the small files of each size tier
 * that holds `minFiles` of them, a merge per tier, the smallest tier first (`force`: every file of
 * a partition of two files or more, one merge). A tier is a merge of its own so that one that
 * fails (a large one that does not fit in memory) leaves the others' merges to go on.
 */
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
  const lists = [...byPartition.keys()].sort().map((key) => byPartition.get(key)!);
  if (scope.force === true) return lists.filter((list) => list.length >= 2);
  return lists.flatMap((list) => {
    const byTier = new Map<number, LandedFile[]>();
    for (const f of list) {
      const t = sizeTier(f.size);
      const tier = byTier.get(t);
      if (tier) tier.push(f);
      else byTier.set(t, [f]);
    }
    return [...byTier.keys()]
      .sort((a, b) => a - b)
      .map((t) => byTier.get(t)!)
      .filter((tier) => tier.length >= policy.minFiles);
  });
}
