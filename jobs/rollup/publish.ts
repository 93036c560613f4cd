// Last step of a rollup run: once every partition state is built, combine the states of every
// (customer, date) partition into the snapshot (stream summaries, per-customer and platform rows,
// per-day series), write the manifest, publish the snapshot with its analyst catalog, and prune
// old snapshots and states no longer needed.
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildCatalog } from '../../warehouse/catalog.ts';
import { catalogFollowsCurrent, installCatalogFor } from '../../warehouse/publication.ts';
import type { PartitionManifest, SnapshotManifest } from '../../warehouse/manifest.ts';
import { combineStates } from '../../warehouse/state-combine.ts';
import { partitionKey, pruneStates, readStates, type PartitionDecision, type StateMeta } from '../../warehouse/state-store.ts';
import { buildDir, newSnapshotId, publishBuild, snapshotFiles } from '../../warehouse/snapshots.ts';
import { STANDARD_BUCKET_SECONDS, WINDOW_NAMES } from '../../warehouse/windows.ts';
import type { QuarantinedFile } from '../../warehouse/landing.ts';
import { writeJsonDurable } from '../../lib/fsx.ts';
import { codeVersion } from '../../lib/version.ts';
import type { JobDeps } from '../deps.ts';

export interface PublishInput {
  runId: string;
  asOf: Date;
  customers: string[];
  misplaced: QuarantinedFile[];
  /** Every partition of the plan, reused or rebuilt. */
  decisions: PartitionDecision[];
  /**
   * The states this process already read (the plan's) and built (its jobs): an inline run passes
   * them so that the publish step does not read every state's record again.
   */
  knownStates?: readonly StateMeta[];
  /** False when the plan saw nothing for retention to remove (absent: look anyway). */
  pruneNeeded?: boolean;
  /** When the run started (ms since epoch), for the manifest's duration. */
  startedAt: number;
  /** Publish even over a CURRENT with a later asOf (`pipeline --replace-current`). */
  replaceCurrent?: boolean;
}

export interface PublishResult {
  manifest: SnapshotManifest;
  published: boolean;
  dir: string;
  pruned: string[];
}

/** A state the run needs is missing: its job did not finish, or it was removed meanwhile. */
export class StateMissingError extends Error {
  override name = 'StateMissingError';
}

/**
 * The state each planned partition uses: the one the plan chose to reuse, or the newest one this
 * run built (a retried job may have built two).
 */
export async function chosenStates(
  deps: JobDeps,
  runId: string,
  decisions: readonly PartitionDecision[],
  known?: readonly StateMeta[],
): Promise<StateMeta[]> {
  let states: Map<string, StateMeta[]>;
  if (known) {
    states = new Map();
    for (const m of known) {
      const key = partitionKey(m.customerId, m.date);
      states.set(key, [...(states.get(key) ?? []), m].sort((a, b) => (a.builtAt < b.builtAt ? 1 : -1)));
    }
  } else {
    states = await readStates(deps.layout);
  }
  return decisions.map((d) => {
    const list = states.get(partitionKey(d.customerId, d.date)) ?? [];
    const m = d.action === 'reuse' ? list.find((x) => x.stateId === d.stateId) : list.find((x) => x.runId === runId);
    if (!m) {
      throw new StateMissingError(
        d.action === 'reuse'
          ? `state ${d.stateId} of partition ${d.customerId}/${d.date} is gone (pruned by a later run?): enqueue the run again`
          : `partition ${d.customerId}/${d.date} has no state built by run ${runId}`,
      );
    }
    return m;
  });
}

export async function publishRollup(deps: JobDeps, input: PublishInput): Promise<PublishResult> {
  const { db, layout, config } = deps;
  const log = deps.log.child({ runId: input.runId });
  const build = snapshotFiles(buildDir(layout, input.runId));
  await removeStrayOutputs(build.dir);
  const states = await chosenStates(deps, input.runId, input.decisions, input.knownStates);

  const combined = await db.withSession((s) =>
    combineStates(s, {
      layout,
      asOf: input.asOf,
      horizonSeconds: config.activityHorizonSeconds,
      customers: input.customers,
      states,
      build,
    }),
  );

  const partitions: PartitionManifest[] = input.customers.map((c) => {
    const mine = states.filter((m) => m.customerId === c);
    const decided = input.decisions.filter((d) => d.customerId === c);
    const f = combined.customers.get(c)!;
    const rowsRead = mine.reduce((a, m) => a + m.rowsRead, 0);
    const deduped = mine.reduce((a, m) => a + m.reports, 0);
    return {
      customerId: c,
      runId: input.runId,
      asOf: input.asOf.toISOString(),
      files: mine
        .flatMap((m) => m.files.map((x) => ({ path: x.path, size: x.size, ...(x.schema === undefined ? {} : { schema: x.schema }) })))
        .sort((a, b) => (a.path < b.path ? -1 : 1)),
      presentColumns: [...new Set(mine.flatMap((m) => m.presentColumns))].sort(),
      // Files quarantined by this run's builds (a reused state's were reported by its own run).
      quarantined: mine.filter((m) => m.runId === input.runId).flatMap((m) => m.quarantined),
      figures: {
        rowsRead,
        afterAsOf: deduped - f.reports,
        duplicatesDropped: rowsRead - deduped,
        reports: f.reports,
        streams: f.streams,
        summaryRows: f.summaryRows,
        seriesRows: f.seriesRows,
      },
      durationMs: mine.filter((m) => m.runId === input.runId).reduce((a, m) => Math.max(a, m.buildMs), 0),
      states: decided.map((d, i) => ({
        date: d.date,
        stateId: mine[i]?.stateId ?? '',
        action: d.action,
        reason: d.reason,
      })),
    };
  });
  const reasons: Record<string, number> = {};
  for (const d of input.decisions) if (d.reason) reasons[d.reason] = (reasons[d.reason] ?? 0) + 1;
  const rebuilt = input.decisions.filter((d) => d.action === 'rebuild').length;

  const sum = (f: (p: PartitionManifest) => number) => partitions.reduce((a, p) => a + f(p), 0);
  const snapshot = newSnapshotId(input.asOf);
  const manifest: SnapshotManifest = {
    formatVersion: 1,
    snapshot,
    runId: input.runId,
    asOf: input.asOf.toISOString(),
    createdAt: new Date().toISOString(),
    codeVersion: codeVersion(),
    durationMs: Date.now() - input.startedAt,
    settings: {
      activityHorizonSeconds: config.activityHorizonSeconds,
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
    partitionStates: { reused: input.decisions.length - rebuilt, rebuilt, reasons },
    combine: {
      rawReportsRead: combined.edgeReportsRead,
      seriesDaysLinked: [...combined.customers.values()].reduce((a, f) => a + f.seriesDaysLinked, 0),
      seriesDaysComputed: [...combined.customers.values()].reduce((a, f) => a + f.seriesDaysWritten, 0),
    },
    quarantined: [
      ...input.misplaced.map((q) => ({ ...q, customerId: null })),
      ...partitions.flatMap((p) => p.quarantined.map((q) => ({ ...q, customerId: p.customerId }))),
    ],
  };
  await writeJsonDurable(build.manifest, manifest);

  let catalogTmp: string | null = null;
  const outcome = await publishBuild(layout, input.runId, snapshot, input.asOf, {
    keep: config.snapshots.keep,
    lockStaleMs: config.snapshots.lockStaleMs,
    log,
    replaceCurrent: input.replaceCurrent === true,
    beforeSwap: async (dir) => {
      catalogTmp = await buildCatalog(db, layout, dir, manifest);
    },
    afterSwap: async () => {
      if (catalogTmp) await installCatalogFor(layout, catalogTmp, snapshot);
    },
    // An earlier publisher killed between its swap and its catalog left them apart.
    reconcile: async (current) => {
      await catalogFollowsCurrent(db, layout, current, log);
    },
  }).catch(async (err: unknown) => {
    if (catalogTmp) await fs.rm(catalogTmp, { force: true });
    throw err;
  });
  if (!outcome.published) log.warn({ snapshot }, 'a snapshot with a later asOf is published; this one is discarded');
  for (const p of outcome.pruned) log.info({ snapshot: p }, 'removed old snapshot');
  log.info(
    { snapshot, published: outcome.published, reports: manifest.rows.reports, reused: manifest.partitionStates?.reused, rebuilt },
    'snapshot published',
  );
  // States that no partition uses any more (files gone, superseded), once past the grace time
  // that protects runs still in flight.
  if (input.pruneNeeded === false) return { manifest, published: outcome.published, dir: outcome.dir, pruned: outcome.pruned };
  const prunedStates = await pruneStates(layout, {
    keep: new Set(states.map((m) => m.stateId)),
    keepFiles: new Set(combined.usedFiles),
    livePartitions: new Set(input.decisions.map((d) => partitionKey(d.customerId, d.date))),
    graceMs: config.snapshots.debrisGraceMs,
  });
  if (prunedStates.gone + prunedStates.superseded + prunedStates.debris > 0) log.info(prunedStates, 'pruned partition states');
  return { manifest, published: outcome.published, dir: outcome.dir, pruned: outcome.pruned };
}

/**
 * Outputs of an earlier attempt of this publish step (killed while combining): the combine
 * writes them all again, so none is trusted.
 */
async function removeStrayOutputs(dir: string): Promise<void> {
  for (const entry of ['stream_summaries', 'stream_timeseries', 'partitions', 'platform_summaries.parquet', 'customer_summaries.parquet']) {
    await fs.rm(path.join(dir, entry), { recursive: true, force: true });
  }
}
