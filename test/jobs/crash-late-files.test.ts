// Kills at several moments of runs while late files keep landing: the next run over the landed
// files gives exactly the figures of a clean run, in a fresh warehouse, over the same files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { listSnapshots, readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { killRollupAt } from '../helpers/fixtures.ts';

const START = new Date('2026-11-20T00:00:00Z');
const at = (h: number) => new Date(START.getTime() + h * 3_600_000);

let crashy: TestWarehouse;
let clean: TestWarehouse;

beforeAll(async () => {
  crashy = await openTestWarehouse();
  clean = await openTestWarehouse();
});
afterAll(async () => {
  await crashy?.close();
  await clean?.close();
});

const killAt = (stage: 'partitions' | 'swap', asOf: Date): Promise<void> => killRollupAt(crashy.root, stage, asOf);

const land = (seed: number, startHour: number, hours: number) =>
  generateReports(crashy.db, crashy.layout, { customers: ['acme', 'globex'], streams: 2, sessions: 25, start: at(startHour), hours, seed });

describe('crash between late files', () => {
  it('the next run equals a clean run over the same files', async () => {
    await land(11, 0, 3);
    expect((await runPipeline(crashy, { asOf: at(3) })).published).toBe(true);
    const before = (await readCurrent(crashy.layout))!;

    // Late files (reports of hours already rolled up), then a run killed while computing.
    await land(12, 1, 3);
    await killAt('partitions', at(4));
    expect((await readCurrent(crashy.layout))!.snapshot).toBe(before.snapshot);
    // More late files, then a run killed inside publication, before the pointer moved.
    await land(13, 2, 2);
    await killAt('swap', at(4));
    expect((await readCurrent(crashy.layout))!.snapshot).toBe(before.snapshot);

    const after = await runPipeline(crashy, { asOf: at(4) });
    expect(after.published).toBe(true);
    expect(after.manifest.quarantined).toEqual([]);

    // The same landed files in a fresh warehouse, one clean run.
    await fs.cp(crashy.layout.rawReports, clean.layout.rawReports, { recursive: true });
    const once = await runPipeline(clean, { asOf: at(4) });
    expect(once.manifest.rows).toEqual(after.manifest.rows);
    expectSameSnapshotRows(await snapshotRows(crashy.db, crashy.layout, after.manifest.snapshot), await snapshotRows(clean.db, clean.layout, once.manifest.snapshot));
    // Nothing of the killed runs is left among the snapshots but the published ones.
    expect((await listSnapshots(crashy.layout)).filter((s) => s.startsWith('.'))).toEqual([]);
  }, 180_000);
});
