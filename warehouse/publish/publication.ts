// What follows CURRENT: the history (snapshots.ts) and the analyst catalog. The catalog cannot be
// swapped in the same rename as CURRENT, so a marker beside it records which snapshot it shows,
// written once it is in place; a publisher killed between the two leaves them apart, and the next
// publish (or `reports`, or `snapshots use`) rebuilds the catalog for CURRENT.
import fs from 'node:fs/promises';
import { z } from 'zod';
import { buildCatalog, installCatalog } from './catalog.ts';
import { readSnapshotManifest } from '../snapshots/index.ts';
import { lockPublication, publishedDir, readCurrent, readHistoryRepaired, snapshotFiles, type CurrentPointer } from '../snapshots/index.ts';
import { writeJsonDurable } from '../../lib/fsx.ts';
import type { Db } from '../duckdb/index.ts';
import type { WarehouseLayout } from '../layout.ts';
import type { Logger } from '../../lib/log.ts';

const MarkerSchema = z.object({ snapshot: z.string() });

export function catalogMarker(layout: WarehouseLayout): string {
  return `${layout.catalog}.snapshot.json`;
}

/** The snapshot the installed catalog shows, or null when unknown (no marker, or a damaged one). */
export async function catalogSnapshot(layout: WarehouseLayout): Promise<string | null> {
  try {
    return MarkerSchema.parse(JSON.parse(await fs.readFile(catalogMarker(layout), 'utf8'))).snapshot;
  } catch {
    return null;
  }
}

/** Put a built catalog in place, then record which snapshot it shows. */
export async function installCatalogFor(layout: WarehouseLayout, tmp: string, snapshot: string): Promise<void> {
  await installCatalog(layout, tmp);
  await writeJsonDurable(catalogMarker(layout), { snapshot });
}

/** Build and install the catalog of `snapshot` (already published). */
export async function rebuildCatalog(db: Db, layout: WarehouseLayout, snapshot: string): Promise<void> {
  const dir = publishedDir(layout, snapshot);
  const manifest = await readSnapshotManifest(snapshotFiles(dir).manifest);
  const tmp = await buildCatalog(db, layout, dir, manifest);
  try {
    await installCatalogFor(layout, tmp, snapshot);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

/** Rebuild the catalog when it does not show `current` (call under the publish lock). */
export async function catalogFollowsCurrent(db: Db, layout: WarehouseLayout, current: CurrentPointer, log: Logger): Promise<boolean> {
  const shown = await catalogSnapshot(layout);
  if (shown === current.snapshot) return false;
  log.warn({ catalog: shown, current: current.snapshot }, 'the analyst catalog does not show the current snapshot (a publisher stopped midway); rebuilding it');
  await rebuildCatalog(db, layout, current.snapshot);
  return true;
}

/**
 * At the start of a command that reads what was published: under the publish lock, put the
 * history and the catalog back in line with CURRENT. Returns CURRENT (null: nothing published);
 * a damaged CURRENT throws SnapshotUnreadableError.
 */
export async function reconcilePublication(db: Db, layout: WarehouseLayout, lockStaleMs: number, log: Logger): Promise<CurrentPointer | null> {
  const lock = await lockPublication(layout, lockStaleMs);
  try {
    const current = await readCurrent(layout);
    if (!current) return null;
    await readHistoryRepaired(layout, current, log);
    await catalogFollowsCurrent(db, layout, current, log);
    return current;
  } finally {
    await lock.release();
  }
}
