// Compaction records (docs/warehouse-state.md, "Compaction of small landed files"): for each
// compacted file, the landed files of its partition whose every row it holds. A record is written
// durably before its compacted file is placed; from the moment that file is in the partition
// folder, the files it lists are covered: readers of the landing area skip them, and retention
// removes them once no snapshot reads them (compaction/retire.ts). A record whose compacted file was never
// placed (a compaction killed before) covers nothing, and the next compaction removes it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { readdirSyncOrEmpty, writeJsonDurable } from '../../lib/fsx.ts';
import { StampedReads } from '../../lib/stamped-reads.ts';
import type { WarehouseLayout } from '../layout.ts';

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
 * Every record, by partition folder (`folders`: only those). Read synchronously, like the landing
 * area it goes with (landing.ts discoverLanding); one that cannot be read covers nothing.
 */
export function readRecordsSync(layout: WarehouseLayout, folders?: readonly string[]): Map<string, CompactionRecord[]> {
  const out = new Map<string, CompactionRecord[]>();
  const all = folders ?? readdirSyncOrEmpty(layout.compaction)
    .filter((n) => n.startsWith('customer='))
    .flatMap((c) => readdirSyncOrEmpty(path.join(layout.compaction, c)).filter((n) => n.startsWith('date=')).map((d) => `${c}/${d}`));
  const dirs = new Set<string>();
  const seen = new Set<string>();
  for (const folder of all) {
    const dir = path.join(layout.compaction, ...folder.split('/'));
    dirs.add(dir);
    const files = readdirSyncOrEmpty(dir)
      .filter((n) => n.endsWith('.json'))
      .map((n) => path.join(dir, n));
    for (const f of files) seen.add(f);
    const records = files.flatMap((f) => readRecord(f) ?? []);
    if (records.length > 0) out.set(folder, records);
  }
  // Records of these folders gone since (retired) are forgotten; other folders' stay.
  recordReads.keepOnly((file) => !dirs.has(path.dirname(file)) || seen.has(file));
  return out;
}

/**
 * Records read, by file: a record is written once (durably, by rename) and never changed, so one
 * whose stamp is unchanged is not parsed again (every run's plan reads them all, and a record of a
 * busy day lists thousands of files). Shared: callers do not modify them.
 */
const recordReads = new StampedReads<CompactionRecord>();
const parseRecord = (file: string): CompactionRecord => CompactionRecordSchema.parse(JSON.parse(readFileSync(file, 'utf8')));

function readRecord(file: string): CompactionRecord | null {
  try {
    return recordReads.readSync(file, parseRecord);
  } catch {
    return null;
  }
}

/**
 * The names of one partition folder's landed files that its `records` cover, given which of the
 * folder's names are listed (a record covers only where its compacted file is placed). A file is
 * matched by name: a landed file is immutable (docs/sdk-ingest.md), and names are not reused while
 * a record stands (collector names are unique, and retire.ts removes a record only after every
 * file it covers; a later file that took a removed file's name is read from the next run on, once
 * the record has gone). The set is kept while the placed records are the same ones (records are
 * shared objects, read through StampedReads): a day of 5-second flushes has tens of thousands of
 * covered names, and the plan and the builds of every run ask.
 */
export function coveredNamesOf(folder: string, records: readonly CompactionRecord[], listed: (name: string) => boolean): ReadonlySet<string> {
  const placed = records.filter((r) => listed(r.compacted));
  if (placed.length === 0) {
    coveredCache.delete(folder);
    return NO_NAMES;
  }
  const kept = coveredCache.get(folder);
  if (kept && kept.records.length === placed.length && kept.records.every((r, i) => r === placed[i])) return kept.names;
  const names = new Set<string>();
  for (const r of placed) for (const c of r.covers) names.add(c.name);
  coveredCache.set(folder, { records: placed, names });
  return names;
}

const NO_NAMES: ReadonlySet<string> = new Set();

/** The covered names last made, by partition folder that has placed records (forgotten once it has none). */
const coveredCache = new Map<string, { records: readonly CompactionRecord[]; names: ReadonlySet<string> }>();
