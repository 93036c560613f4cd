// Compaction records (docs/warehouse-state.md, "Compaction of small landed files"): for each
// compacted file, the landed files of its partition whose every row it holds. A record is written
// durably before its compacted file is placed; from the moment that file is in the partition
// folder, the files it lists are covered: readers of the landing area skip them, and retention
// removes them once no snapshot reads them (compaction/retire.ts). A record whose compacted file was never
// placed (a compaction killed before) covers nothing, and the next compaction removes it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { readdirSyncOrEmpty, writeJsonDurable } from '../lib/fsx.ts';
import type { WarehouseLayout } from './layout.ts';

/** A landed file as a record names it: its base name, and what tells it from a later file of that name. */
export const CoveredFileSchema = z.object({ name: z.string(), size: z.number().int().nonnegative(), mtimeMs: z.number() });
export type CoveredFile = z.infer<typeof CoveredFileSchema>;

export const CompactionRecordSchema = z.object({
  /** Base name of the compacted file, in the folder of the files it covers. */
  compacted: z.string(),
  createdAt: z.string(),
  covers: z.array(CoveredFileSchema),
});
export type CompactionRecord = z.infer<typeof CompactionRecordSchema>;

/** Records by partition folder (`customer=<id>/date=<d>`, as in a landed file's relPath). */
export type RecordsByPartition = ReadonlyMap<string, readonly CompactionRecord[]>;

export function partitionFolder(customerId: string, date: string): string {
  return `customer=${customerId}/date=${date}`;
}

export function recordFile(layout: WarehouseLayout, folder: string, compacted: string): string {
  return path.join(layout.compaction, ...folder.split('/'), `${compacted}.json`);
}

export async function writeRecord(layout: WarehouseLayout, folder: string, record: CompactionRecord): Promise<void> {
  await writeJsonDurable(recordFile(layout, folder, record.compacted), record);
}

/**
 * Every record, by partition folder. Read synchronously, like the landing area it goes with
 * (landing.ts discoverLanding); one that cannot be read covers nothing.
 */
export function readRecordsSync(layout: WarehouseLayout): Map<string, CompactionRecord[]> {
  const out = new Map<string, CompactionRecord[]>();
  for (const c of readdirSyncOrEmpty(layout.compaction).filter((n) => n.startsWith('customer='))) {
    for (const d of readdirSyncOrEmpty(path.join(layout.compaction, c)).filter((n) => n.startsWith('date='))) {
      const folder = `${c}/${d}`;
      const records = readdirSyncOrEmpty(path.join(layout.compaction, c, d))
        .filter((n) => n.endsWith('.json'))
        .flatMap((n) => readRecord(path.join(layout.compaction, c, d, n)) ?? []);
      if (records.length > 0) out.set(folder, records);
    }
  }
  return out;
}

function readRecord(file: string): CompactionRecord | null {
  try {
    return CompactionRecordSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return null;
  }
}

const identity = (relPath: string, size: number, mtimeMs: number) => `${relPath}\n${size}\n${mtimeMs}`;

/**
 * `files` without those that a record of their partition covers, where the record's compacted file
 * is among `files` (placed). A file is matched by name, size and modification time, so a later
 * file that takes a removed file's name is never covered.
 */
export function withoutCovered<T extends { relPath: string; size: number; mtimeMs: number }>(files: T[], records: RecordsByPartition): T[] {
  if (records.size === 0) return files;
  const listed = new Set(files.map((f) => f.relPath));
  const covered = new Set<string>();
  for (const [folder, list] of records) {
    for (const r of list) {
      if (!listed.has(`${folder}/${r.compacted}`)) continue;
      for (const c of r.covers) covered.add(identity(`${folder}/${c.name}`, c.size, c.mtimeMs));
    }
  }
  return files.filter((f) => !covered.has(identity(f.relPath, f.size, f.mtimeMs)));
}
