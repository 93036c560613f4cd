// Damaged publication state and publishers killed midway: PUBLISHED holding garbage is rebuilt
// from the snapshot folders before CURRENT moves; a damaged CURRENT is named, never read as
// "nothing published"; after a kill between the swap and the catalog (its state reproduced), the catalog and the
// history are brought back in line with CURRENT, and the current snapshot is never pruned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { listSnapshots, readCurrent, readHistory, SnapshotUnreadableError } from '../../warehouse/snapshots/snapshot-folders.ts';
import { catalogSnapshot, reconcilePublication } from '../../warehouse/publish/publication.ts';
import { currentSnapshot } from '../../warehouse/snapshots/snapshot-read.ts';
import { pino } from 'pino';
import { silentLogger } from '../../lib/log.ts';

const START = new Date('2026-11-20T00:00:00Z');
const at = (h: number) => new Date(START.getTime() + h * 3_600_000);

let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse({ SNAPSHOT_KEEP: '2' });
  await generateReports(wh.db, wh.layout, { customers: ['acme', 'globex'], streams: 2, sessions: 40, start: START, hours: 4, seed: 5 });
});

afterAll(async () => {
  await wh?.close();
});

/** Which snapshot the installed catalog's views show, read as an analyst would. */
async function catalogShows(): Promise<string> {
  const instance = await DuckDBInstance.create(wh.layout.catalog, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    const [row] = (await conn.runAndReadAll('SELECT snapshot FROM snapshot_info')).getRowObjectsJS();
    return String(row!['snapshot']);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** A logger whose warnings are kept, to check what an operator is told. */
function recordingLogger(): { log: typeof silentLogger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const log = pino({ level: 'warn' }, { write: (s: string) => void chunks.push(s) });
  return { log, lines: () => chunks.map((c) => JSON.parse(c) as Record<string, unknown>) };
}

/**
 * The state a publisher killed after moving CURRENT and before installing its catalog leaves: a
 * full run, then the previous catalog (and its marker) put back as they were.
 */
async function publishThenLoseCatalog(asOf: Date): Promise<void> {
  const saved = { catalog: await fs.readFile(wh.layout.catalog), marker: await fs.readFile(`${wh.layout.catalog}.snapshot.json`) };
  await runPipeline(wh, { asOf });
  await fs.writeFile(wh.layout.catalog, saved.catalog);
  await fs.writeFile(`${wh.layout.catalog}.snapshot.json`, saved.marker);
}

describe('publication faults', () => {
  it('tells a missing CURRENT (nothing published) from a damaged one (named)', async () => {
    expect(await readCurrent(wh.layout)).toBeNull();
    await fs.mkdir(wh.layout.snapshots, { recursive: true });
    await fs.writeFile(wh.layout.currentPointer, '{"snapshot": 42');
    const err = await readCurrent(wh.layout).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SnapshotUnreadableError);
    expect((err as SnapshotUnreadableError).file).toBe(wh.layout.currentPointer);
    await fs.rm(wh.layout.currentPointer);
  });

  it('rebuilds a damaged PUBLISHED from the snapshot folders before the swap, and retention goes on', async () => {
    const first = await runPipeline(wh, { asOf: at(2) });
    const second = await runPipeline(wh, { asOf: at(3) });
    await fs.writeFile(path.join(wh.layout.snapshots, 'PUBLISHED'), 'garbage{');
    const { log, lines } = recordingLogger();
    const third = await runPipeline({ ...wh, log }, { asOf: at(4) });
    expect(third.published).toBe(true);
    expect(lines().some((l) => l['msg'] === 'the snapshot history file is damaged; rebuilt it from the snapshot folders' && String(l['file']).endsWith('PUBLISHED'))).toBe(true);
    // Rebuilt in asOf order, then retention (keep 2) applied to it.
    expect(await readHistory(wh.layout)).toEqual([second.manifest.snapshot, third.manifest.snapshot]);
    expect(await listSnapshots(wh.layout)).toEqual([second.manifest.snapshot, third.manifest.snapshot].sort());
    expect(first.pruned).toEqual([]);
  });

  it('publishes over a damaged CURRENT, taking the latest published asOf as the one to beat', async () => {
    const before = (await readCurrent(wh.layout))!;
    await fs.writeFile(wh.layout.currentPointer, 'not json');
    // An older asOf than the real current one must still lose.
    const older = await runPipeline(wh, { asOf: at(1) });
    expect(older.published).toBe(false);
    await expect(readCurrent(wh.layout)).rejects.toBeInstanceOf(SnapshotUnreadableError);
    const newer = await runPipeline(wh, { asOf: at(5) });
    expect(newer.published).toBe(true);
    expect((await readCurrent(wh.layout))!.snapshot).toBe(newer.manifest.snapshot);
    expect(await readHistory(wh.layout)).toEqual([before.snapshot, newer.manifest.snapshot]);
  });

  it('a CURRENT naming a snapshot without a readable manifest is unreadable, not "nothing published"', async () => {
    const real = await fs.readFile(wh.layout.currentPointer, 'utf8');
    await fs.writeFile(wh.layout.currentPointer, JSON.stringify({ snapshot: 'gone-snapshot', asOf: at(5).toISOString(), publishedAt: at(5).toISOString() }));
    const err = await currentSnapshot(wh.layout).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SnapshotUnreadableError);
    expect((err as SnapshotUnreadableError).file).toBe(path.join(wh.layout.snapshots, 'gone-snapshot', 'manifest.json'));
    await fs.writeFile(wh.layout.currentPointer, real);
  });

  it('after a kill between the swap and the catalog, the catalog and the history follow CURRENT again', async () => {
    const before = (await readCurrent(wh.layout))!;
    expect(await catalogShows()).toBe(before.snapshot);
    await publishThenLoseCatalog(at(6));
    const current = (await readCurrent(wh.layout))!;
    expect(current.snapshot).not.toBe(before.snapshot);
    // The kill left the catalog behind.
    expect(await catalogShows()).toBe(before.snapshot);
    expect(await catalogSnapshot(wh.layout)).toBe(before.snapshot);
    // As if the kill had come before the history was written, too.
    await fs.writeFile(path.join(wh.layout.snapshots, 'PUBLISHED'), JSON.stringify([before.snapshot]));

    // What `reports` (and every publish) does first.
    await reconcilePublication(wh.db, wh.layout, 2000, silentLogger);
    expect(await catalogShows()).toBe(current.snapshot);
    expect(await catalogSnapshot(wh.layout)).toBe(current.snapshot);
    expect(await readHistory(wh.layout)).toEqual([before.snapshot, current.snapshot]);

    // A later publish with keep 2 keeps the one that was current.
    const next = await runPipeline(wh, { asOf: at(7) });
    expect(next.pruned).not.toContain(current.snapshot);
    expect(await listSnapshots(wh.layout)).toContain(current.snapshot);
    expect(await catalogShows()).toBe(next.manifest.snapshot);
  });
});
