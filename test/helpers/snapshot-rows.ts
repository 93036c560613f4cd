// Every row of a snapshot's Parquet outputs (stream summaries, series, platform rows), in a fixed
// order, for comparing two snapshots figure by figure.
import type { Db } from '../../warehouse/duckdb/db.ts';
import { fileList, quotedString } from '../../warehouse/sql-files.ts';
import { readSnapshotManifest } from '../../warehouse/manifest.ts';
import { publishedDir, snapshotFiles } from '../../warehouse/snapshots.ts';
import type { WarehouseLayout } from '../../warehouse/layout.ts';

export interface SnapshotRows {
  summaries: Record<string, unknown>[];
  series: Record<string, unknown>[];
  platform: Record<string, unknown>[];
}

export async function snapshotRows(db: Db, layout: WarehouseLayout, snapshot: string): Promise<SnapshotRows> {
  const files = snapshotFiles(publishedDir(layout, snapshot));
  const manifest = await readSnapshotManifest(files.manifest);
  const customers = manifest.partitions.map((p) => p.customerId);
  return db.withSession(async (s) => {
    const all = (list: string[], order: string) =>
      list.length === 0 ? Promise.resolve([]) : s.all<Record<string, unknown>>(`SELECT * FROM read_parquet(${fileList(list)}) ORDER BY ${order}`);
    return {
      summaries: await all(customers.map(files.summaries), 'windowName, streamId'),
      series: await all(customers.map(files.series), 'bucketSeconds, streamId, bucketStart'),
      platform: await s.all<Record<string, unknown>>(`SELECT * FROM read_parquet(${quotedString(files.platform)}) ORDER BY ALL`),
    };
  });
}
