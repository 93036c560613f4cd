// `state/` bounded at a short rollup cadence: a superseded partition state goes once its successor
// has been there for STATE_SUPERSEDED_GRACE_SECONDS (0 here), unless a run in flight holds a lease
// on it; a lease lives as long as its run's build folder, so a dead run's protects nothing, and a
// run that publishes releases its own. Published snapshots keep their figures whatever is pruned
// (they hold hard links to the series files they use).
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { snapshotRows, type SnapshotRows } from '../helpers/snapshot-rows.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { readStates, statePartitionDir } from '../../warehouse/states/state-store.ts';
import { leaseStates, pruneStates } from '../../warehouse/states/state-retention.ts';
import { beginBuild, buildDir, readHistory, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import { readdirSyncOrEmpty } from '../../lib/fsx.ts';

const BASE = new Date('2026-11-18T08:00:00Z');
const DATE = '2026-11-18';
const at = (minutes: number) => new Date(BASE.getTime() + minutes * 60_000);

let wh: TestWarehouse;
let landed = 0;

beforeAll(async () => {
  wh = await openTestWarehouse({ STATE_SUPERSEDED_GRACE_SECONDS: '0', SNAPSHOT_DEBRIS_GRACE_SECONDS: '3600', SNAPSHOT_KEEP: '3' });
  await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 2, sessions: 4, start: BASE, hours: 2, seed: 1 });
}, 60_000);

afterAll(async () => {
  await wh?.close();
});

/** A new small file into the busy partition (as a collector's flush lands one). */
const landOne = () => generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 1, sessions: 1, start: new Date(BASE.getTime() + (landed % 2) * 3_600_000), hours: 1, seed: 100 + landed++ });

/** Every folder of the busy partition's states, complete or half-built. */
const folders = () => readdirSyncOrEmpty(statePartitionDir(wh.layout, 'acme', DATE));
const leases = () => readdirSyncOrEmpty(path.join(wh.layout.state, '.leases'));
const newestState = async () => (await readStates(wh.layout)).get(`acme/${DATE}`)![0]!.stateId;

/** A pid of this host that no process has (a child that exited). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

describe('partition states at a short cadence', () => {
  it('a busy partition keeps a bounded number of state folders, however many runs, and published snapshots keep their figures', async () => {
    const published = new Map<string, SnapshotRows>();
    let run = 0;
    for (; run < 12; run++) {
      if (run > 0) await landOne();
      const r = await runPipeline(wh, { asOf: at(180 + run), compact: false });
      expect(r.manifest.partitionStates!.rebuilt).toBe(1);
      published.set(r.manifest.snapshot, await snapshotRows(wh.db, wh.layout, r.manifest.snapshot));
      // The state in use, and at most one more: not one per run.
      expect(folders().length, `after run ${run}`).toBeLessThanOrEqual(2);
      // Its leases released with its publication.
      expect(leases()).toEqual([]);
    }
    expect(folders()).toEqual([await newestState()]);
    // The snapshots still kept read as they did when published, though their states are gone.
    const kept = await readHistory(wh.layout);
    expect(kept.length).toBe(3);
    for (const s of kept) expect(await snapshotRows(wh.db, wh.layout, s), s).toEqual(published.get(s));
    // Their series are files of their own (hard links), not the states'.
    const series = await fs.readdir(path.dirname(snapshotFiles(path.join(wh.layout.snapshots, kept[0]!)).seriesDay('acme', DATE)));
    expect(series.length).toBeGreaterThan(0);
  }, 180_000);

  it("a run in flight that holds a lease never loses its states; a dead run's lease protects nothing", async () => {
    const held = await newestState();
    const runId = 'in-flight-run';
    await beginBuild(wh.layout, runId, process.pid);
    await leaseStates(wh.layout, runId, [held]);

    for (let i = 0; i < 3; i++) {
      await landOne();
      const r = await runPipeline(wh, { asOf: at(200 + i), compact: false });
      expect(r.manifest.partitionStates!.rebuilt).toBe(1);
      expect(folders(), `run ${i}`).toContain(held);
      expect(folders().length).toBeLessThanOrEqual(3);
    }
    // Pruning by itself (any run's publish step) spares it too.
    await pruneStates(wh.layout, { keep: new Set(), livePartitions: new Set([`acme/${DATE}`]), graceMs: 3_600_000, supersededGraceMs: 0 });
    expect(folders()).toContain(held);
    expect(leases()).toEqual([runId]);

    // The run's process dies (on this host): its lease goes, and so does the state.
    const owner = snapshotFiles(buildDir(wh.layout, runId)).owner;
    await fs.writeFile(owner, JSON.stringify({ ...JSON.parse(await fs.readFile(owner, 'utf8')), pid: await deadPid() }));
    await landOne();
    await runPipeline(wh, { asOf: at(210), compact: false });
    expect(folders()).not.toContain(held);
    expect(folders()).toEqual([await newestState()]);
    expect(leases()).toEqual([]);
  }, 120_000);
});
