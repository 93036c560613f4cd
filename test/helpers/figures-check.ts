// Checks a published snapshot against the independent computation (independent.ts) over the raw
// files: stream summaries of every window, series of every standard size, platform rows.
import { expect } from 'vitest';
import type { Db } from '../../warehouse/duckdb/db.ts';
import { fileList, quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { readSnapshotManifest } from '../../warehouse/snapshots/snapshot-manifest.ts';
import { publishedDir, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import { STANDARD_BUCKET_SECONDS, WINDOWS } from '../../warehouse/figures/windows.ts';
import type { WarehouseLayout } from '../../warehouse/layout.ts';
import { expectSameFigure, expectSameRows, Independent, type Row } from './independent.ts';

export async function expectSnapshotMatchesIndependent(db: Db, layout: WarehouseLayout, snapshot: string, what: string): Promise<void> {
  const dir = publishedDir(layout, snapshot);
  const files = snapshotFiles(dir);
  const manifest = await readSnapshotManifest(files.manifest);
  const asOf = new Date(manifest.asOf);
  const ind = await Independent.create(db, layout.rawReports, asOf);
  const customers = manifest.partitions.map((p) => p.customerId);
  const query = (sql: string) => db.withSession((s) => s.all<Row>(sql));
  for (const w of WINDOWS) {
    const theirs = await ind.summaries(w.name);
    const ours =
      customers.length === 0
        ? []
        : await query(
            `SELECT streamId, totalSessions, totalBytesOffloaded, totalBytesFallback, avgOffloadRatio, avgPeerCount,
                    avgBufferHealth, activePeers, live, lastSeenAt
             FROM read_parquet(${fileList(customers.map(files.summaries))}) WHERE windowName = '${w.name}' ORDER BY streamId`,
          );
    expectSameRows(ours, theirs, `${what}: window ${w.name}`);
  }
  for (const size of STANDARD_BUCKET_SECONDS) {
    const theirs = await ind.series(size);
    const ours =
      customers.length === 0
        ? []
        : await query(
            `SELECT streamId, epoch_ms(bucketStart) AS start, sessions, bytesOffloaded, bytesFallback, offloadRatio,
                    avgPeerCount, avgBufferHealth, rebufferEvents
             FROM read_parquet(${fileList(customers.map(files.series))}, hive_partitioning = false)
             WHERE bucketSeconds = ${size} ORDER BY streamId, bucketStart`,
          );
    expectSameRows(ours, theirs, `${what}: ${size} s series`);
  }
  const platform = await query(`SELECT * FROM read_parquet(${quotedString(files.platform)}) ORDER BY windowName`);
  for (const row of platform) {
    const w = WINDOWS.find((x) => x.name === row['windowName'])!;
    const t = await ind.platform(w.name);
    for (const k of Object.keys(t)) expectSameFigure(row[k], t[k], `${what}: platform ${w.name} ${k}`);
  }
  expect(platform).toHaveLength(WINDOWS.length);
}
