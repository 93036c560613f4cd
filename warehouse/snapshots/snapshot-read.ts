// Reading a published snapshot back: its manifest and its stream summaries as typed rows.
import type { Db } from '../duckdb/index.ts';
import { fileList } from '../duckdb/index.ts';
import { readSnapshotManifest, type SnapshotManifest } from './snapshot-manifest.ts';
import { publishedDir, readCurrent, snapshotFiles, SnapshotUnreadableError } from './snapshot-folders.ts';
import type { WarehouseLayout } from '../layout.ts';

export interface StreamSummary {
  windowName: string;
  streamId: string;
  totalSessions: number;
  totalBytesOffloaded: number;
  totalBytesFallback: number;
  avgOffloadRatio: number;
  avgPeerCount: number;
  avgBufferHealth: number;
  activePeers: number;
  live: boolean;
  lastSeenAt: Date | null;
}

export interface LoadedSnapshot {
  dir: string;
  manifest: SnapshotManifest;
}

/** The published snapshot's folder and manifest, or null when none is published. */
export async function currentSnapshot(layout: WarehouseLayout): Promise<LoadedSnapshot | null> {
  const pointer = await readCurrent(layout);
  if (!pointer) return null;
  const dir = publishedDir(layout, pointer.snapshot);
  const file = snapshotFiles(dir).manifest;
  try {
    return { dir, manifest: await readSnapshotManifest(file) };
  } catch (err) {
    // CURRENT names a snapshot whose manifest is missing or damaged: not "nothing published".
    throw new SnapshotUnreadableError(file, err instanceof Error ? err.message.split('\n')[0]! : String(err));
  }
}

/** The nine figures of a summary row (a stream's, a customer's or the platform's), as columns of its file. */
export const SUMMARY_FIGURES =
  'totalSessions, totalBytesOffloaded, totalBytesFallback, avgOffloadRatio, avgPeerCount, avgBufferHealth, activePeers, live, lastSeenAt';

/** Stream summaries of a snapshot for every window (or one), ordered by window and stream. */
export async function readStreamSummaries(db: Db, snap: LoadedSnapshot, window?: string): Promise<StreamSummary[]> {
  const files = snap.manifest.partitions.map((p) => snapshotFiles(snap.dir).summaries(p.customerId));
  if (files.length === 0) return [];
  return db.withSession((s) =>
    s.all<StreamSummary>(
      `SELECT windowName, streamId, ${SUMMARY_FIGURES}
       FROM read_parquet(${fileList(files)})
       WHERE $window IS NULL OR windowName = $window
       ORDER BY windowName, streamId`,
      { window: window ?? null },
    ),
  );
}
