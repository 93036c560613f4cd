// Every row of a snapshot's Parquet outputs (stream summaries, series, platform rows), in a fixed
// order, for comparing two snapshots figure by figure.
import { expect } from 'vitest';
import type { Db } from '../../warehouse/duckdb/db.ts';
import { fileList, quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { readSnapshotManifest } from '../../warehouse/snapshots/snapshot-manifest.ts';
import { publishedDir, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
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

/**
 * Values identical in structure and content (primitives by Object.is, Dates by time, arrays and
 * plain objects member by member): a sufficient condition for toEqual, checked without building
 * an assertion per member. False for anything else, which then goes to toEqual.
 */
function identical(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && Object.is(a.getTime(), b.getTime());
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!identical(a[i], b[i])) return false;
    return true;
  }
  if (Object.getPrototypeOf(a) !== Object.prototype || Object.getPrototypeOf(b) !== Object.prototype) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || !identical((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/**
 * expect(ours).toEqual(theirs) for two snapshots' rows: identical rows pass at once (a snapshot
 * holds tens of thousands of figures, and toEqual's generic walk over them took much of the
 * figure tests' CPU time); any difference goes to toEqual, which says what differs.
 */
export function expectSameSnapshotRows(ours: SnapshotRows, theirs: SnapshotRows, what?: string): void {
  if (identical(ours, theirs)) return;
  expect(ours, what).toEqual(theirs);
}
