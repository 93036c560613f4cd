// Retention of the files that compacted files cover (compaction-records.ts). No new run reads a
// covered file, but the snapshots that listed it still do (exports, the catalog, on-demand figures
// read the files of their manifest): it is removed once no snapshot folder lists it and its record
// is older than the grace time (a run planned before the file was covered may still read it). A
// record goes once every file it covers is gone, after them; a compacted file that a newer one
// covers goes only once its own record is gone (that record would otherwise cover nothing, and
// its files would be read again). Records whose compacted file was never placed (a compaction
// killed before) are removed. Runs under the compaction lock.
import fs from 'node:fs/promises';
import { statSync } from 'node:fs';
import path from 'node:path';
import { readSnapshotManifest } from '../snapshots/index.ts';
import { listSnapshots, publishedDir, snapshotFiles } from '../snapshots/index.ts';
import type { WarehouseLayout } from '../layout.ts';
import { readRecordsSync, recordFile, type CompactionRecord, type CoveredFile } from '../landing/index.ts';
import { fsyncDir, readdirSyncOrEmpty } from '../../lib/fsx.ts';
import type { HeldLock } from '../../lib/file-lock.ts';

export interface Retired {
  /** Covered files removed. */
  files: number;
  /** Records removed: every file they covered gone, or their compacted file never placed. */
  records: number;
}

/** `lock`: the compaction lock, checked still ours before each partition's removals. */
export async function retireCovered(layout: WarehouseLayout, graceMs: number, lock: Pick<HeldLock, 'assertHeld'>): Promise<Retired> {
  const retired: Retired = { files: 0, records: 0 };
  // The snapshots' manifests are read only when some covered file is old enough to go.
  let listed: Promise<ReadonlySet<string> | null> | undefined;
  const run: RetireRun = { listed: () => (listed ??= snapshotInputs(layout)), graceMs, retired };
  for (const [folder, list] of readRecordsSync(layout)) {
    lock.assertHeld();
    await retirePartition(layout, folder, list, run);
  }
  return retired;
}

interface RetireRun {
  /** Landed files (relPath) that a snapshot lists; null when a manifest could not be read: none is removed. */
  listed: () => Promise<ReadonlySet<string> | null>;
  graceMs: number;
  retired: Retired;
}

/** A partition's records, oldest first: an older record's files go before the compacted file a newer one covers. */
async function retirePartition(layout: WarehouseLayout, folder: string, records: readonly CompactionRecord[], run: RetireRun): Promise<void> {
  const dir = path.join(layout.rawReports, ...folder.split('/'));
  const present = new Set(readdirSyncOrEmpty(dir));
  const named = new Set(records.map((r) => r.compacted));
  for (const r of [...records].sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1))) {
    const isLeft = (c: CoveredFile) => present.has(c.name) && sameFile(path.join(dir, c.name), c);
    const placed = present.has(r.compacted);
    const old = Date.now() - Date.parse(r.createdAt) >= run.graceMs;
    // Within the grace time nothing goes, and the record stays while any file it covers does: one
    // stat tells, not one per file (a record of a busy day covers thousands, and every compaction,
    // before each run of `start` and every COMPACT_EVERY on the worker tier, passes over every record).
    if (placed && !old && r.covers.some(isLeft)) continue;
    const left = placed && old ? r.covers.filter(isLeft) : [];
    const due = left.length > 0;
    const listed = due ? await run.listed() : null;
    const removable = listed === null ? [] : left.filter((c) => !listed.has(`${folder}/${c.name}`) && !named.has(c.name));
    for (const c of removable) {
      await fs.rm(path.join(dir, c.name), { force: true });
      present.delete(c.name);
    }
    if (removable.length > 0) await fsyncDir(dir);
    run.retired.files += removable.length;
    if (removable.length < left.length) continue;
    await removeRecord(layout, folder, r.compacted);
    named.delete(r.compacted);
    run.retired.records++;
  }
}

async function removeRecord(layout: WarehouseLayout, folder: string, compacted: string): Promise<void> {
  const file = recordFile(layout, folder, compacted);
  await fs.rm(file, { force: true });
  await fsyncDir(path.dirname(file));
}

/** Whether `file` is the file a record names: a later file that took its name is not. */
function sameFile(file: string, c: CoveredFile): boolean {
  const st = statSync(file, { throwIfNoEntry: false });
  return st !== undefined && st.size === c.size && st.mtimeMs === c.mtimeMs;
}

/** Every landed file (relPath) that a snapshot folder's manifest lists; null when one cannot be read. */
async function snapshotInputs(layout: WarehouseLayout): Promise<Set<string> | null> {
  const listed = new Set<string>();
  for (const id of await listSnapshots(layout)) {
    try {
      const manifest = await readSnapshotManifest(snapshotFiles(publishedDir(layout, id)).manifest);
      for (const p of manifest.partitions) for (const f of p.files) listed.add(f.path);
    } catch {
      return null;
    }
  }
  return listed;
}
