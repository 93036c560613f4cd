// The manifest of a rollup run's snapshot: per customer, the files, states and figures of its
// partitions, and for the run, their totals, what the combine read and linked, and every file
// quarantined (warehouse/snapshots/snapshot-manifest.ts holds its schema).
import type { PartitionManifest, SnapshotManifest } from '../../warehouse/snapshots/index.ts';
import type { CombineResult } from '../../warehouse/publish/index.ts';
import type { PartitionDecision, StateMeta } from '../../warehouse/states/index.ts';
import { STANDARD_BUCKET_SECONDS, WINDOW_NAMES } from '../../warehouse/figures/index.ts';
import { codeVersion } from '../../lib/version.ts';
import type { QuarantinedFile } from '../../warehouse/landing/index.ts';

/** What the manifest says of the run itself (publish.ts PublishInput). */
export interface RunOutline {
  runId: string;
  asOf: Date;
  customers: readonly string[];
  /** Files found outside any partition folder, quarantined by the plan. */
  misplaced: readonly QuarantinedFile[];
  /** Every partition of the plan, reused or rebuilt. */
  decisions: readonly PartitionDecision[];
  /** When the run started (ms since epoch), for the manifest's duration. */
  startedAt: number;
}

export function runManifest(
  input: RunOutline,
  snapshot: string,
  /** The state of each planned partition, in the order of `input.decisions`. */
  states: readonly StateMeta[],
  combined: CombineResult,
  activityHorizonSeconds: number,
): SnapshotManifest {
  const partitions = input.customers.map((c) => partitionManifest(input, c, states, combined));
  const rebuilt = input.decisions.filter((d) => d.action === 'rebuild').length;
  const stale = input.decisions.filter((d) => d.reason === 'stale').length;
  const sum = (f: (p: PartitionManifest) => number) => partitions.reduce((a, p) => a + f(p), 0);
  const linkedAndComputed = [...combined.customers.values()];
  return {
    formatVersion: 1,
    snapshot,
    runId: input.runId,
    asOf: input.asOf.toISOString(),
    createdAt: new Date().toISOString(),
    codeVersion: codeVersion(),
    durationMs: Date.now() - input.startedAt,
    settings: {
      activityHorizonSeconds,
      windows: [...WINDOW_NAMES],
      bucketSeconds: [...STANDARD_BUCKET_SECONDS],
    },
    inputs: { files: sum((p) => p.files.length), bytes: sum((p) => p.files.reduce((a, f) => a + f.size, 0)) },
    rows: {
      reportsRead: sum((p) => p.figures.rowsRead),
      afterAsOf: sum((p) => p.figures.afterAsOf),
      duplicatesDropped: sum((p) => p.figures.duplicatesDropped),
      reports: sum((p) => p.figures.reports),
      streams: sum((p) => p.figures.streams),
      streamSummaries: sum((p) => p.figures.summaryRows),
      streamTimeseries: sum((p) => p.figures.seriesRows),
      platformSummaries: combined.platformRows,
    },
    partitions,
    partitionStates: {
      reused: input.decisions.length - rebuilt,
      rebuilt,
      reasons: reasonCounts(input),
      // Only while a rebuild after a deployment is under way.
      ...(stale > 0 ? { stale } : {}),
    },
    combine: {
      rawReportsRead: combined.edgeReportsRead,
      layeredStatesCut: combined.layeredStatesCut,
      seriesDaysLinked: linkedAndComputed.reduce((a, f) => a + f.seriesDaysLinked, 0),
      seriesDaysComputed: linkedAndComputed.reduce((a, f) => a + f.seriesDaysWritten, 0),
      classUnitsComputed: combined.classUnits.computed,
      classUnitsLinked: combined.classUnits.linked,
      summaryBasesComputed: combined.summaries.basesComputed,
      summaryStreamsFromBase: combined.summaries.streamsFromBase,
      summaryStreamsRecomputed: combined.summaries.streamsRecomputed,
    },
    quarantined: [
      ...input.misplaced.map((q) => ({ ...q, customerId: null })),
      ...partitions.flatMap((p) => p.quarantined.map((q) => ({ ...q, customerId: p.customerId }))),
    ],
  };
}

/** A customer's part of the manifest: its files, states and figures. */
function partitionManifest(input: RunOutline, customerId: string, states: readonly StateMeta[], combined: CombineResult): PartitionManifest {
  const mine = states.filter((m) => m.customerId === customerId);
  const decided = input.decisions.filter((d) => d.customerId === customerId);
  const builtNow = mine.filter((m) => m.runId === input.runId);
  const f = combined.customers.get(customerId)!;
  const rowsRead = mine.reduce((a, m) => a + m.rowsRead, 0);
  const deduped = mine.reduce((a, m) => a + m.reports, 0);
  return {
    customerId,
    runId: input.runId,
    asOf: input.asOf.toISOString(),
    files: mine
      .flatMap((m) => m.files.map((x) => ({ path: x.path, size: x.size, ...(x.schema === undefined ? {} : { schema: x.schema }) })))
      .sort((a, b) => (a.path < b.path ? -1 : 1)),
    presentColumns: [...new Set(mine.flatMap((m) => m.presentColumns))].sort(),
    // Files quarantined by this run's builds (a reused state's were reported by its own run).
    quarantined: builtNow.flatMap((m) => m.quarantined),
    figures: {
      rowsRead,
      afterAsOf: deduped - f.reports,
      duplicatesDropped: rowsRead - deduped,
      reports: f.reports,
      streams: f.streams,
      summaryRows: f.summaryRows,
      seriesRows: f.seriesRows,
    },
    durationMs: builtNow.reduce((a, m) => Math.max(a, m.buildMs), 0),
    states: decided.map((d, i) => ({
      date: d.date,
      stateId: mine[i]?.stateId ?? '',
      action: d.action,
      reason: d.reason,
    })),
  };
}

/** How many partitions were rebuilt for each reason. */
function reasonCounts(input: RunOutline): Record<string, number> {
  const reasons: Record<string, number> = {};
  for (const d of input.decisions) if (d.action === 'rebuild' && d.reason) reasons[d.reason] = (reasons[d.reason] ?? 0) + 1;
  return reasons;
}
