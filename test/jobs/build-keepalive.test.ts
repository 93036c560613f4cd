// A distributed run's build folder belongs to no process: its age decides when it is debris. Its
// partition jobs refresh it while they work, so a run longer than SNAPSHOT_DEBRIS_GRACE_SECONDS is
// not removed by another run's plan; a folder nobody refreshes still is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { beginBuild, buildDir, cleanDebris, keepBuildAlive, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import { silentLogger } from '../../lib/log.ts';

let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse();
});

afterAll(async () => {
  await wh?.close();
});

async function startedLongAgo(runId: string): Promise<void> {
  await beginBuild(wh.layout, runId, null);
  const owner = snapshotFiles(buildDir(wh.layout, runId)).owner;
  const o = JSON.parse(await fs.readFile(owner, 'utf8')) as Record<string, unknown>;
  await fs.writeFile(owner, JSON.stringify({ ...o, startedAt: new Date(Date.now() - 3_600_000).toISOString() }));
}

describe('the build folder of a distributed run', () => {
  it('is kept while its jobs refresh it, and removed once they stop for longer than the grace time', async () => {
    await startedLongAgo('alive');
    await startedLongAgo('dead');
    await keepBuildAlive(wh.layout, 'alive');
    const removed = await cleanDebris(wh.layout, 60_000, silentLogger);
    expect(removed.map((r) => r.split('/').pop())).toEqual(['.build-dead']);
    expect((await fs.stat(buildDir(wh.layout, 'alive'))).isDirectory()).toBe(true);
  });

  it('refreshing a folder already published or removed does nothing', async () => {
    await expect(keepBuildAlive(wh.layout, 'never-was')).resolves.toBeUndefined();
  });
});
