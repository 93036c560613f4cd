// One run per asOf: a second inline run of the same asOf while the first runs is refused with
// "already running" (exit code 4 in the CLI), computes nothing, and leaves the first to publish;
// another asOf is not held up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { RunAlreadyRunningError, lockRun, runLocked } from '../../warehouse/snapshots/run-lock.ts';
import { beginBuild, buildDir, listSnapshots, readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { compactIso } from '../../lib/time.ts';
import fs from 'node:fs/promises';

const START = new Date('2026-11-20T00:00:00Z');
const at = (h: number) => new Date(START.getTime() + h * 3_600_000);
let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse();
  await generateReports(wh.db, wh.layout, { customers: ['acme', 'globex'], streams: 2, sessions: 30, start: START, hours: 3, seed: 4 });
});
afterAll(async () => {
  await wh?.close();
});

describe('run lock', () => {
  it('refuses a second run of the same asOf while the first runs', async () => {
    const first = runPipeline(wh, { asOf: at(3) });
    // The first has taken its lock before its first await on DuckDB.
    await new Promise((r) => setTimeout(r, 50));
    expect(await runLocked(wh.layout, at(3), wh.config.snapshots.lockStaleMs)).toBe(true);
    const second = await runPipeline(wh, { asOf: at(3) }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(RunAlreadyRunningError);
    expect((second as RunAlreadyRunningError).exitCode).toBe(4);
    const done = await first;
    expect(done.published).toBe(true);
    expect((await readCurrent(wh.layout))!.snapshot).toBe(done.manifest.snapshot);
    expect(await listSnapshots(wh.layout)).toEqual([done.manifest.snapshot]);
    // Released: the same asOf can run again, and another asOf never waited.
    expect(await runLocked(wh.layout, at(3), wh.config.snapshots.lockStaleMs)).toBe(false);
    expect((await runPipeline(wh, { asOf: at(3) })).published).toBe(true);
  });

  it('refuses an inline run while a distributed run of the same asOf is alive on the workers', async () => {
    // What a flow's plan job leaves: the build folder named by the compact asOf, owned by no pid.
    await beginBuild(wh.layout, compactIso(at(2)), null);
    const refused = await runPipeline(wh, { asOf: at(2) }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RunAlreadyRunningError);
    expect((refused as RunAlreadyRunningError).exitCode).toBe(4);
    // Once the flow's folder is gone (published, or swept as debris), the inline run goes ahead
    // (and is then discarded for the later asOf already current, which is another matter).
    await fs.rm(buildDir(wh.layout, compactIso(at(2))), { recursive: true, force: true });
    expect((await runPipeline(wh, { asOf: at(2) })).manifest.asOf).toBe(at(2).toISOString());
  });

  it('is exclusive per asOf, and free again once released', async () => {
    const other = await lockRun(wh.layout, at(1), 2000);
    const release = await lockRun(wh.layout, at(2), 2000);
    await expect(lockRun(wh.layout, at(2), 2000)).rejects.toBeInstanceOf(RunAlreadyRunningError);
    await release();
    const again = await lockRun(wh.layout, at(2), 2000);
    await again();
    await other();
  });
});
