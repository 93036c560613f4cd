// Last step of a rollup run: once every partition state is built, combine the states of every
// (customer, date) partition into the snapshot (stream summaries, per-customer and platform rows,
// per-day series), write the manifest, publish the snapshot with its analyst catalog, and prune
// old snapshots and states no longer needed.
import fs from 'node:fs/promises';
import path from 'node:path';
import { buildCatalog } from '../../warehouse/publish/index.ts';
import { catalogFollowsCurrent, installCatalogFor } from '../../warehouse/publish/index.ts';
import { manifestToWrite, type SnapshotManifest } from '../../warehouse/snapshots/index.ts';
import { combineStates, type CombineResult } from '../../warehouse/publish/index.ts';
import { partitionKey, readStates, type PartitionDecision, type StateMeta } from '../../warehouse/states/index.ts';
import { pruneStates, releaseLeases } from '../../warehouse/states/index.ts';
import { buildDir, newSnapshotId, publishBuild, snapshotFiles, type PublishOutcome, type SnapshotFiles } from '../../warehouse/snapshots/index.ts';
import type { QuarantinedFile } from '../../warehouse/landing/index.ts';
import { writeJsonDurable } from '../../lib/fsx.ts';
import type { Logger } from '../../lib/log.ts';
import type { JobDeps } from '../deps.ts';
import { runManifest } from './run-snapshot-manifest.ts';
import { countRebuild, STALE_REBUILT_REASON } from './rebuild-metrics.ts';
import { InternalError } from '../../lib/errors.ts';

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
export class StateMissingError extends InternalError {
  override name = 'StateMissingError';
  override readonly errorCode = 'state_missing';
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
  const log = deps.log.child({ runId: input.runId });
  const build = snapshotFiles(buildDir(deps.layout, input.runId));
  await removeStrayOutputs(build.dir);
  const states = await chosenStates(deps, input.runId, input.decisions, input.knownStates);
  const combined = await combine(deps, input, states, build);
  const manifest = runManifest(input, newSnapshotId(input.asOf), states, combined, deps.config.activityHorizonSeconds);
  await writeJsonDurable(build.manifest, manifestToWrite(manifest));
  const outcome = await publishWithCatalog(deps, input, manifest, log);
  // The run reads no state any more: its leases go (state-retention.ts).
  await releaseLeases(deps.layout, input.runId);
  // States that no partition uses any more (files gone, superseded), unless a run in flight holds
  // a lease on them, once past their grace time.
  // New class units' classes replace others (at every new layer, at every hour): look too.
  if (input.pruneNeeded !== false || combined.classUnits.computed > 0 || combined.summaries.basesComputed > 0) await pruneUnusedStates(deps, input, states, combined, log);
  return { manifest, published: outcome.published, dir: outcome.dir, pruned: outcome.pruned };
}

/** The snapshot's summaries and series files, from the states of its partitions. */
function combine(deps: JobDeps, input: PublishInput, states: readonly StateMeta[], build: SnapshotFiles): Promise<CombineResult> {
  return deps.db.withSession((s) =>
    combineStates(s, {
      layout: deps.layout,
      asOf: input.asOf,
      horizonSeconds: deps.config.activityHorizonSeconds,
      customers: input.customers,
      states,
      build,
    }),
  );
}

/**
 * Publish the build folder as the snapshot, with its analyst catalog: built before the swap,
 * installed after it (and made to follow CURRENT again if an earlier publisher was killed between
 * the two).
 */
async function publishWithCatalog(deps: JobDeps, input: PublishInput, manifest: SnapshotManifest, log: Logger): Promise<PublishOutcome> {
  const { db, layout, config } = deps;
  const { snapshot } = manifest;
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
  for (const p of outcome.pruned) log.info({ snapshot: p }, 'removed old snapshot');
  const ps = manifest.partitionStates;
  const said = { snapshot, published: outcome.published, reports: manifest.rows.reports, reused: ps?.reused, rebuilt: ps?.rebuilt, ...(ps?.stale ? { stale: ps.stale } : {}) };
  if (outcome.published) countRebuild(manifest);
  if (outcome.published && ps?.stale) log.info({ ...said, staleRebuilt: ps.reasons[STALE_REBUILT_REASON] ?? 0 }, 'snapshot published; rebuild after a deployment under way');
  else if (outcome.published) log.info(said, 'snapshot published');
  else log.warn(said, 'snapshot discarded: a snapshot with a later asOf is current');
  return outcome;
}

async function pruneUnusedStates(deps: JobDeps, input: PublishInput, states: readonly StateMeta[], combined: CombineResult, log: Logger): Promise<void> {
  const prunedStates = await pruneStates(deps.layout, {
    keep: new Set(states.map((m) => m.stateId)),
    keepFiles: new Set(combined.usedFiles),
    livePartitions: new Set(input.decisions.map((d) => partitionKey(d.customerId, d.date))),
    graceMs: deps.config.snapshots.debrisGraceMs,
    supersededGraceMs: deps.config.snapshots.stateSupersededGraceMs,
  });
  if (prunedStates.gone + prunedStates.superseded + prunedStates.debris > 0) log.info(prunedStates, 'pruned partition states');
}

/**
 * Outputs of an earlier attempt of this publish step (killed while combining): the combine
 * writes them all again, so none is trusted.
 */
async function removeStrayOutputs(dir: string): Promise<void> {
  for (const entry of ['stream_summaries', 'stream_timeseries', 'session_classes', 'partitions', 'platform_summaries.parquet', 'customer_summaries.parquet', 'stream_quality.parquet']) {
    await fs.rm(path.join(dir, entry), { recursive: true, force: true });
  }
}
