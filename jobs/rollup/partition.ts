// One customer partition of a rollup run: load and check its files, compute its rollups into the
// run's build folder, and record what it did in a partition manifest. Idempotent: a retry
// overwrites the same outputs.
import { customerFiles } from '../../warehouse/landing.ts';
import { loadCustomerReports } from '../../warehouse/partition-load.ts';
import { writePartitionRollups } from '../../warehouse/partition-rollup.ts';
import { buildDir, snapshotFiles } from '../../warehouse/snapshots.ts';
import type { PartitionManifest } from '../../warehouse/manifest.ts';
import { writeJsonDurable } from '../../lib/fsx.ts';
import type { JobDeps } from '../deps.ts';

export async function rollupPartition(
  deps: JobDeps,
  input: { runId: string; asOf: Date; customerId: string },
): Promise<PartitionManifest> {
  const started = Date.now();
  const { db, layout, config } = deps;
  const log = deps.log.child({ runId: input.runId, customerId: input.customerId });
  const out = snapshotFiles(buildDir(layout, input.runId));
  const landed = await customerFiles(layout, input.customerId);

  const manifest = await db.withSession(async (s) => {
    const loaded = await loadCustomerReports(
      { s, layout, customerId: input.customerId, runId: input.runId, log },
      landed,
    );
    const figures = await writePartitionRollups(s, {
      asOf: input.asOf,
      horizonSeconds: config.activityHorizonSeconds,
      summariesFile: out.summaries(input.customerId),
      seriesFile: out.series(input.customerId),
    });
    await s.run(`DROP TABLE IF EXISTS raw_reports; DROP TABLE IF EXISTS reports;`);
    const m: PartitionManifest = {
      customerId: input.customerId,
      runId: input.runId,
      asOf: input.asOf.toISOString(),
      files: loaded.files.map((f) => ({ path: f.relPath, size: f.size })),
      presentColumns: loaded.presentColumns,
      quarantined: loaded.quarantined,
      figures,
      durationMs: Date.now() - started,
    };
    return m;
  });
  await writeJsonDurable(out.partitionManifest(input.customerId), manifest);
  log.info(
    { reports: manifest.figures.reports, streams: manifest.figures.streams, files: manifest.files.length, ms: manifest.durationMs },
    'partition rolled up',
  );
  return manifest;
}
