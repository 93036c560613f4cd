// While a rebuild after a deployment is under way (a snapshot still used stale states), runs keep
// coming without new reports: `start`'s loop runs again right after a run, not at idle time, and a
// worker tier's tick with nothing landed is not quiet. Once no state is stale, both go idle again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWarehouse } from '../helpers/warehouse.ts';
import { CODE_SALT, openDeployedWarehouse, type DeployedWarehouse } from '../helpers/deployed-warehouse.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { LiveRollups, type LiveRun } from '../../jobs/live-rollups.ts';
import { quietTick } from '../../jobs/queue/quiet-tick.ts';

const HOUR = 3_600_000;
let deployed: DeployedWarehouse;
let wh: TestWarehouse;
/** Partitions of the warehouse (each customer's dates). */
let partitions = 0;

beforeAll(async () => {
  deployed = await openDeployedWarehouse({ ROLLUP_REBUILD_BUDGET: '2' });
  ({ wh, partitions } = deployed);
}, 120_000);

afterAll(async () => {
  await deployed?.close();
});

describe('the cadence of a rebuild after a deployment', () => {
  it("start's loop runs until no state is stale, then waits for reports or idle time; a tick is quiet only then", async () => {
    const idle = { layout: wh.layout, refreshMs: HOUR };
    expect(await quietTick(idle, new Date())).toBe(true);
    process.env[CODE_SALT] = 'cadence';
    const runs: LiveRun[] = [];
    let over: () => void;
    const done = new Promise<void>((r) => (over = r));
    const live = new LiveRollups(wh, { minGapMs: 0, idleMs: HOUR }, (run) => {
      runs.push(run);
      if (run.error || (run.result && (run.result.manifest.partitionStates?.stale ?? 0) === 0)) over();
    });
    live.start();
    live.landed();
    await done;
    await live.stop();
    expect(runs.map((r) => r.error)).toEqual(runs.map(() => null));
    // Every partition stale, 2 a run: the landing's run, then runs one after the other with no report landed.
    expect(partitions).toBeGreaterThanOrEqual(5);
    const expected = Array.from({ length: Math.ceil(partitions / 2) }, (_, i) => Math.max(0, partitions - 2 * (i + 1)));
    expect(runs.map((r) => r.result!.manifest.partitionStates!.stale ?? 0)).toEqual(expected);
    expect(runs.map((r) => r.reason)).toEqual(expected.map((_, i) => (i === 0 ? 'landed' : 'rebuild')));
    expect(await quietTick(idle, new Date())).toBe(true);

    // A worker tier's tick: not quiet while CURRENT's snapshot used stale states.
    process.env[CODE_SALT] = 'cadence-2';
    const again = await runPipeline(wh, { asOf: new Date() });
    expect(again.manifest.partitionStates!.stale).toBe(partitions - 2);
    expect(await quietTick(idle, new Date())).toBe(false);
  }, 120_000);
});
