// Which files a compaction merges (warehouse/compaction/select.ts): the small files of a partition
// by size tier, so that a compacted file is not merged again with every new batch of small files.
import { describe, expect, it } from 'vitest';
import { partitionsDue, sizeTier } from '../../warehouse/compaction/select.ts';
import type { LandedFile } from '../../warehouse/landing/landed-files.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const policy = { smallFileBytes: 16 * MiB, minFiles: 4 };

let n = 0;
function file(size: number, customerId = 'acme', date = '2026-11-27'): LandedFile {
  const name = `f-${String(n++).padStart(4, '0')}.parquet`;
  const relPath = `customer=${customerId}/date=${date}/${name}`;
  return { path: `/landing/${relPath}`, relPath, customerId, date, size, mtimeMs: 0 };
}
const names = (lists: LandedFile[][]) => lists.map((list) => list.map((f) => f.relPath.split('/').pop()).sort());

describe('compaction: which files are merged', () => {
  it('sizes fall into tiers four times apart from 256 KiB', () => {
    expect([1, 256 * KiB, 256 * KiB + 1, MiB, MiB + 1, 4 * MiB, 4 * MiB + 1, 16 * MiB].map(sizeTier)).toEqual([0, 0, 1, 1, 2, 2, 3, 3]);
  });

  it('merges the small files of a tier that holds enough of them, not a larger compacted file beside them', () => {
    n = 0;
    // Five flushes of 100 KiB and the 6 MiB file an earlier compaction made: only the flushes.
    const flushes = Array.from({ length: 5 }, () => file(100 * KiB));
    const compacted = file(6 * MiB);
    expect(names(partitionsDue([compacted, ...flushes], policy))).toEqual([flushes.map((f) => f.relPath.split('/').pop()).sort()]);
  });

  it('waits while no tier holds enough small files, whatever their total', () => {
    n = 0;
    // Three files in each of three tiers (minFiles 4), and a large file: nothing is due.
    const files = [file(10 * KiB), file(20 * KiB), file(30 * KiB), file(300 * KiB), file(400 * KiB), file(500 * KiB), file(2 * MiB), file(3 * MiB), file(3 * MiB), file(40 * MiB)];
    expect(partitionsDue(files, policy)).toEqual([]);
  });

  it('merges every tier that is due, a merge per tier, partition by partition, and never a file past the small size', () => {
    n = 0;
    const a = [file(5 * KiB), file(6 * KiB), file(7 * KiB), file(8 * KiB)];
    const aBig = [file(2 * MiB), file(2 * MiB), file(3 * MiB), file(4 * MiB)];
    const aLarge = Array.from({ length: 4 }, () => file(20 * MiB));
    const b = [file(1 * KiB, 'beta'), file(1 * KiB, 'beta'), file(1 * KiB, 'beta')];
    const c = Array.from({ length: 4 }, () => file(MiB, 'acme', '2026-11-26'));
    const due = partitionsDue([...aLarge, ...a, ...b, ...aBig, ...c], policy);
    expect(due.map((list) => `${list[0]!.customerId}/${list[0]!.date}`)).toEqual(['acme/2026-11-26', 'acme/2026-11-27', 'acme/2026-11-27']);
    // acme/2026-11-27: tier 0 (a), then tier 2 (aBig), each a merge of its own.
    expect(names(due)).toEqual([c, a, aBig].map((list) => list.map((f) => f.relPath.split('/').pop()).sort()));
  });

  it('--force merges every file of a partition of two or more, whatever the tiers and sizes', () => {
    n = 0;
    const files = [file(10 * KiB), file(40 * MiB), file(3 * MiB, 'beta')];
    expect(names(partitionsDue(files, policy, { force: true }))).toEqual([['f-0000.parquet', 'f-0001.parquet']]);
  });
});
