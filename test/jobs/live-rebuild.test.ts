// `start`'s background rebuild after a deployment (jobs/live-rebuild.ts, docs/warehouse-state.md
// "After a deployment"): its runs rebuild no stale state, the lane rebuilds them one at a time
// while no run is in flight or due and asks for a run; the runs converge to no stale state, each
// snapshot equal to the independent SQL over the raw files. A lane whose live runs are never
// quiet still converges (it waits ROLLUP_REBUILD_SECONDS at most), and one whose runs are busy for a
// while builds nothing before they are quiet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWarehouse } from '../helpers/warehouse.ts';
import { CODE_SALT, openDeployedWarehouse, type DeployedWarehouse } from '../helpers/deployed-warehouse.ts';
import { expectSnapshotMatchesIndependent } from '../helpers/figures-check.ts';
import { LiveRollups, type LiveRun } from '../../jobs/live-rollups.ts';
import { LiveRebuild, type RebuildPass } from '../../jobs/live-rebuild.ts';
import { readStates, stateVersion, type StateMeta } from '../../warehouse/states/state-store.ts';

const HOUR = 3_600_000;
let deployed: DeployedWarehouse;
let wh: TestWarehouse;
/** Partitions of the warehouse (each customer's dates). */
let partitions = 0;

beforeAll(async () => {
  // Every snapshot of the rebuild kept, to be checked at the end.
  deployed = await openDeployedWarehouse({ SNAPSHOT_KEEP: '100' });
  ({ wh, partitions } = deployed);
}, 120_000);

afterAll(async () => {
  await deployed?.close();
});

const newest = async (): Promise<StateMeta[]> => [...(await readStates(wh.layout)).values()].map((list) => list[0]!);

/** The lane alone, over a stand-in of the live loop; resolves with its first pass. */
function onePass(busy: () => boolean, maxWaitMs: number): { pass: Promise<RebuildPass>; requested: () => number; lane: LiveRebuild } {
  let asked = 0;
  let resolve: (p: RebuildPass) => void;
  const pass = new Promise<RebuildPass>((r) => (resolve = r));
  const lane = new LiveRebuild(wh, { busy, requested: () => void asked++, turn: (work) => work() }, { stepMs: maxWaitMs, maxPartitions: 8, maxReports: 1_000_000 }, (p) => resolve(p));
  lane.wake();
  return { pass, requested: () => asked, lane };
}

describe("start's background rebuild", () => {
  it('runs rebuild no stale state, the lane does, and the runs converge with exact snapshots', async () => {
    expect(partitions).toBeGreaterThanOrEqual(5);
    process.env[CODE_SALT] = 'lane-1';
    const runs: LiveRun[] = [];
    let over: () => void;
    const done = new Promise<void>((r) => (over = r));
    let lane: LiveRebuild | null = null;
    const passes: RebuildPass[] = [];
    const live = new LiveRollups(wh, { minGapMs: 0, idleMs: HOUR, staleInRuns: false }, (run) => {
      runs.push(run);
      const stale = run.result?.manifest.partitionStates?.stale ?? 0;
      if (run.error || (run.result && stale === 0)) over();
      else if (stale > 0) lane!.wake();
    });
    lane = new LiveRebuild(wh, live, { stepMs: 300, maxPartitions: 2, maxReports: 1_000_000 }, (p) => passes.push(p));
    live.start();
    live.landed();
    await done;
    await Promise.all([live.stop(), lane.stop()]);
    expect(runs.map((r) => r.error)).toEqual(runs.map(() => null));
    // The first run: every partition stale, none rebuilt by it.
    expect(runs[0]!.result!.manifest.partitionStates).toEqual({ reused: partitions, rebuilt: 0, reasons: {}, stale: partitions });
    for (const r of runs) {
      const ps = r.result!.manifest.partitionStates!;
      // No run rebuilt a partition: those the lane rebuilt are reused.
      expect(ps.rebuilt).toBe(0);
      await expectSnapshotMatchesIndependent(wh.db, wh.layout, r.result!.manifest.snapshot, `run of ${r.result!.manifest.asOf}`);
    }
    const staleByRun = runs.map((r) => r.result!.manifest.partitionStates!.stale ?? 0);
    expect(staleByRun).toEqual([...staleByRun].sort((a, b) => b - a));
    expect(staleByRun.at(-1)).toBe(0);
    // The runs after the first were asked for by the lane (no report landed, idle time an hour).
    expect(runs.slice(1).map((r) => r.reason)).toEqual(runs.slice(1).map(() => 'rebuild'));
    expect(passes.reduce((a, p) => a + p.rebuilt, 0)).toBe(partitions);
    for (const m of await newest()) expect(m.stateVersion).toBe(stateVersion());
    // Built by the lane's steps (a step's states share a runId), two partitions at most a step (maxPartitions).
    const bySteps = new Map<string, number>();
    for (const m of await newest()) bySteps.set(m.runId, (bySteps.get(m.runId) ?? 0) + 1);
    for (const [runId, n] of bySteps) {
      expect(runId).toMatch(/^rebuild-/);
      expect(n).toBeLessThanOrEqual(2);
    }
    expect(bySteps.size).toBeGreaterThanOrEqual(Math.ceil(partitions / 2));
  }, 120_000);

  it('builds nothing while the live runs are busy, and converges when they never are quiet', async () => {
    process.env[CODE_SALT] = 'lane-2';
    // Busy for a second, then quiet: no state is built before the quiet moment.
    const quietFrom = Date.now() + 1000;
    const a = onePass(() => Date.now() < quietFrom, 10_000);
    const passA = await a.pass;
    expect(passA).toMatchObject({ found: partitions, rebuilt: partitions, error: null });
    expect(a.requested()).toBeGreaterThanOrEqual(1);
    const built = await newest();
    for (const m of built) expect(m.stateVersion).toBe(stateVersion());
    // builtAt is taken when a state's build starts writing, after its partition's quiet check.
    for (const m of built) expect(Date.parse(m.builtAt)).toBeGreaterThanOrEqual(quietFrom);
    await a.lane.stop();

    // Never quiet: each partition after waiting maxWaitMs, all of them in the end.
    process.env[CODE_SALT] = 'lane-3';
    const b = onePass(() => true, 150);
    const passB = await b.pass;
    expect(passB).toMatchObject({ found: partitions, rebuilt: partitions, error: null });
    // Its first step waited the whole stepMs (one partition, then steps of as many as fit).
    expect(passB.ms).toBeGreaterThanOrEqual(150);
    for (const m of await newest()) expect(m.stateVersion).toBe(stateVersion());
    await b.lane.stop();
  }, 120_000);
});
