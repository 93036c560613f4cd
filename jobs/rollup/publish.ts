// Last step of a rollup run: once every customer partition is done, add up the platform-wide rows
// from the partitions' stream summaries, write the manifest, publish the snapshot with its
// analyst catalog, and prune old snapshots.
import fs from 'node:fs/promises';
import path from 'node:path';
import { LIST, TIMESTAMP, VARCHAR, listValue } from '@duckdb/node-api';
import { fileList, fillSql, sqlFile, type DbSession } from '../../warehouse/duckdb.ts';
import { buildCatalog } from '../../warehouse/catalog.ts';
import { catalogFollowsCurrent, installCatalogFor } from '../../warehouse/publication.ts';
import { readPartitionManifest, type PartitionManifest, type SnapshotManifest } from '../../warehouse/manifest.ts';
import { copyToParquet, summaryParams, timestampParam } from '../../warehouse/partition-rollup.ts';
import { projectionSql, ROLLUP_COLUMNS } from '../../warehouse/report-columns.ts';
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

export async function publishRollup(deps: JobDeps, input: PublishInput): Promise<PublishResult> {
  const { db, layout, config } = deps;
  const log = deps.log.child({ runId: input.runId });
  const build = snapshotFiles(buildDir(layout, input.runId));
  const partitions: PartitionManifest[] = [];
  for (const c of input.customers) partitions.push(await readPartitionManifest(build.partitionManifest(c)));
  await removeStrayPartitions(build.dir, new Set(input.customers));

  const platformRows = await db.withSession(async (s) => {
    await loadAllSummaries(s, input.customers.map(build.summaries), input.asOf, config.activityHorizonSeconds);
    // One query adds the platform rows and the per-customer rows up; each goes to its own file.
    await s.run(
      `CREATE OR REPLACE TEMP TABLE added_up AS ${fillSql(sqlFile('platform_summaries'), { summaries: 'all_summaries' })}`,
      { window_names: listValue([...WINDOW_NAMES]) },
      { window_names: LIST(VARCHAR) },
    );
    const rows = await copyToParquet(s, `SELECT * EXCLUDE (customer) FROM added_up WHERE customer IS NULL`, build.platform);
    await copyToParquet(s, `SELECT * FROM added_up WHERE customer IS NOT NULL ORDER BY customer, windowName`, build.customers);
    await s.run(`DROP TABLE all_summaries; DROP TABLE added_up`);
    return rows;
  });

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
      platformSummaries: platformRows,
    },
    partitions,
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
  log.info({ snapshot, published: outcome.published, reports: manifest.rows.reports }, 'snapshot published');
  return { manifest, published: outcome.published, dir: outcome.dir, pruned: outcome.pruned };
}

/** Every partition's stream summaries in one temp table (typed, even when there are none). */
async function loadAllSummaries(s: DbSession, files: string[], asOf: Date, horizonSeconds: number): Promise<void> {
  if (files.length > 0) {
    await s.run(`CREATE OR REPLACE TEMP TABLE all_summaries AS SELECT * FROM read_parquet(${fileList(files)}, hive_partitioning = true)`);
    return;
  }
  await s.run(
    `CREATE OR REPLACE TEMP TABLE raw_reports AS SELECT NULL::VARCHAR AS filename, ${projectionSql(ROLLUP_COLUMNS, new Set())} LIMIT 0`,
  );
  await s.run(sqlFile('dedup_reports'), { as_of: timestampParam(asOf) }, { as_of: TIMESTAMP });
  const { params, types } = summaryParams(asOf, horizonSeconds);
  await s.run(`CREATE OR REPLACE TEMP TABLE all_summaries AS SELECT *, NULL::VARCHAR AS customer FROM (${sqlFile('stream_summaries')})`, params, types);
}

/**
 * Outputs of customers that are not in this run's plan (left by an earlier attempt) go, and so do
 * half-written files of a partition attempt that was killed (`*.tmp-*`): a snapshot holds only
 * finished outputs.
 */
async function removeStrayPartitions(dir: string, customers: Set<string>): Promise<void> {
  for (const table of ['stream_summaries', 'stream_timeseries']) {
    const entries = await fs.readdir(path.join(dir, table)).catch(() => [] as string[]);
    for (const e of entries) {
      const folder = path.join(dir, table, e);
      if (!customers.has(e.replace(/^customer=/, ''))) {
        await fs.rm(folder, { recursive: true, force: true });
        continue;
      }
      for (const f of await fs.readdir(folder).catch(() => [] as string[])) {
        if (f.includes('.tmp-')) await fs.rm(path.join(folder, f), { force: true });
      }
    }
  }
  const manifests = await fs.readdir(path.join(dir, 'partitions')).catch(() => [] as string[]);
  for (const m of manifests) {
    if (!customers.has(m.replace(/\.json$/, ''))) await fs.rm(path.join(dir, 'partitions', m), { force: true });
  }
}
