// The manifest of a snapshot (manifest.json) and of each customer partition of a run: what was
// read, what came out, with which code, how long it took, and which partition states were reused
// or rebuilt. Validated when read back.
import fs from 'node:fs/promises';
import { z } from 'zod';

export const InputFileSchema = z.object({
  /** Relative to the landing root (raw/session_reports). */
  path: z.string(),
  size: z.number().int().nonnegative(),
  /** Its columns and types, when its state recorded them (partition-load.ts `fileSchema`). */
  schema: z.string().optional(),
});
export type InputFile = z.infer<typeof InputFileSchema>;

export const QuarantinedSchema = z.object({ relPath: z.string(), reason: z.string(), detail: z.string() });

/** What a run did with the state of one (customer, date) partition (docs/warehouse-state.md). */
export const PartitionStateSchema = z.object({
  date: z.string(),
  stateId: z.string(),
  action: z.enum(['reuse', 'rebuild']),
  /** Why it was rebuilt; null when reused. */
  reason: z.string().nullable(),
});
export type PartitionState = z.infer<typeof PartitionStateSchema>;

export const PartitionManifestSchema = z.object({
  customerId: z.string(),
  runId: z.string(),
  asOf: z.string(),
  files: z.array(InputFileSchema),
  /** Columns of session-report.md present in at least one file (and the provenance columns, when one has them). */
  presentColumns: z.array(z.string()),
  quarantined: z.array(QuarantinedSchema),
  figures: z.object({
    rowsRead: z.number(),
    afterAsOf: z.number(),
    duplicatesDropped: z.number(),
    reports: z.number(),
    streams: z.number(),
    summaryRows: z.number(),
    seriesRows: z.number(),
  }),
  durationMs: z.number(),
  /** The state each of its date partitions used (absent in manifests of older versions). */
  states: z.array(PartitionStateSchema).optional(),
});
export type PartitionManifest = z.infer<typeof PartitionManifestSchema>;

export const SnapshotManifestSchema = z.object({
  formatVersion: z.literal(1),
  snapshot: z.string(),
  runId: z.string(),
  asOf: z.string(),
  createdAt: z.string(),
  codeVersion: z.string(),
  durationMs: z.number(),
  settings: z.object({
    activityHorizonSeconds: z.number(),
    windows: z.array(z.string()),
    bucketSeconds: z.array(z.number()),
  }),
  inputs: z.object({ files: z.number(), bytes: z.number() }),
  rows: z.object({
    reportsRead: z.number(),
    afterAsOf: z.number(),
    duplicatesDropped: z.number(),
    reports: z.number(),
    streams: z.number(),
    streamSummaries: z.number(),
    streamTimeseries: z.number(),
    platformSummaries: z.number(),
  }),
  partitions: z.array(PartitionManifestSchema),
  /** Date partitions whose state was reused or rebuilt, and how many were rebuilt for each reason. */
  partitionStates: z
    .object({ reused: z.number(), rebuilt: z.number(), reasons: z.record(z.string(), z.number()) })
    .optional(),
  quarantined: z.array(QuarantinedSchema.extend({ customerId: z.string().nullable() })),
  /**
   * How the states were combined: raw reports read where a window edge cuts an hour or a day's
   * state holds reports after asOf, and days whose series are the state's own file (linked) or
   * were computed up to asOf.
   */
  combine: z
    .object({
      rawReportsRead: z.number(),
      /** Layered states whose cut hours or asOf's minute were read from their layers' report files (never raw files). */
      layeredStatesCut: z.number().optional(),
      seriesDaysLinked: z.number(),
      seriesDaysComputed: z.number(),
      /** Class units (class-units.ts) whose session classes the run computed, and all it linked. */
      classUnitsComputed: z.number().optional(),
      classUnitsLinked: z.number().optional(),
    })
    .optional(),
});
export type SnapshotManifest = z.infer<typeof SnapshotManifestSchema>;

export async function readSnapshotManifest(file: string): Promise<SnapshotManifest> {
  return SnapshotManifestSchema.parse(JSON.parse(await fs.readFile(file, 'utf8')));
}

export async function readPartitionManifest(file: string): Promise<PartitionManifest> {
  return PartitionManifestSchema.parse(JSON.parse(await fs.readFile(file, 'utf8')));
}
