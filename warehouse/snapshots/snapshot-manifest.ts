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
  /**
   * In a manifest as written: the index of its schema in its partition's `schemas` (one copy of
   * each distinct schema, not one per file); `readSnapshotManifest` puts the schema back in
   * `schema`.
   */
  schemaRef: z.number().int().nonnegative().optional(),
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
  /** The distinct schemas of `files`, which name them by `schemaRef` (absent in manifests of older versions). */
  schemas: z.array(z.string()).optional(),
  /** Columns of docs/sdk-ingest.md present in at least one file (and the provenance columns, when one has them). */
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
  /**
   * Date partitions whose state was reused or rebuilt, and how many were rebuilt for each reason
   * (`state code changed`: a stale state rebuilt after a deployment); `stale`: of those reused, the
   * states of other state code that a rebuild after a deployment has not replaced yet (present only
   * while there are some; since 2026-11-28).
   */
  partitionStates: z
    .object({ reused: z.number(), rebuilt: z.number(), reasons: z.record(z.string(), z.number()), stale: z.number().optional() })
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
      /** Summary bases (summary-bases.ts) the run made, and streams summed from a base or from all of their classes. */
      summaryBasesComputed: z.number().optional(),
      summaryStreamsFromBase: z.number().optional(),
      summaryStreamsRecomputed: z.number().optional(),
    })
    .optional(),
});
export type SnapshotManifest = z.infer<typeof SnapshotManifestSchema>;

export async function readSnapshotManifest(file: string): Promise<SnapshotManifest> {
  const manifest = SnapshotManifestSchema.parse(JSON.parse(await fs.readFile(file, 'utf8')));
  for (const p of manifest.partitions) for (const f of p.files) withSchema(p, f);
  return manifest;
}

/**
 * The manifest as it is written: in each partition, each distinct file schema once, in `schemas`,
 * and each file naming its own by index (a schema string is about 1 KB, and 30 days × 100 streams
 * listed 1,300 files of one schema: 1.4 MB a manifest, written at every run and read at every
 * swap). `readSnapshotManifest` puts the schemas back.
 */
export function manifestToWrite(manifest: SnapshotManifest): SnapshotManifest {
  return { ...manifest, partitions: manifest.partitions.map(partitionToWrite) };
}

function partitionToWrite(p: PartitionManifest): PartitionManifest {
  const index = new Map<string, number>();
  const files = p.files.map(({ schema, schemaRef: _, ...f }) => {
    if (schema === undefined) return f;
    let i = index.get(schema);
    if (i === undefined) index.set(schema, (i = index.size));
    return { ...f, schemaRef: i };
  });
  const { schemas: _, ...rest } = p;
  return { ...rest, files, ...(index.size > 0 ? { schemas: [...index.keys()] } : {}) };
}

/** The file's schema back in `schema`, from its partition's `schemas` (a reference out of range: none). */
function withSchema(p: PartitionManifest, f: InputFile): void {
  if (f.schemaRef === undefined) return;
  const schema = p.schemas?.[f.schemaRef];
  if (schema !== undefined) f.schema = schema;
}

export async function readPartitionManifest(file: string): Promise<PartitionManifest> {
  return PartitionManifestSchema.parse(JSON.parse(await fs.readFile(file, 'utf8')));
}
