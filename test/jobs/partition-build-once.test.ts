// A partition is built by one run at a time (the job functions alone, real DuckDB and files, no
// Redis): two runs planned before either built need the same partitions; each partition is built
// once, by one of them, and the other waits for that build and reuses its state, which both
// snapshots then use. A rebuild asked for is never answered with a reuse.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { planRollup, type RollupPlan } from '../../jobs/rollup/plan.ts';
import { rollupPartition, withReused, type BatchResult } from '../../jobs/rollup/partition.ts';
import { publishRollupOnce } from '../../jobs/rollup/publish-once.ts';
import { partitionKey, readStates } from '../../warehouse/states/state-store.ts';
import { rollupRunId } from '../../jobs/queue/names.ts';

const START = new Date('2026-11-20T00:00:00Z');
const A = new Date('2026-11-20T02:00:00Z');
const B = new Date('2026-11-20T02:00:05Z');

let wh: TestWarehouse;

const keys = (xs: readonly { customerId: string; date: string }[]) => xs.map((x) => partitionKey(x.customerId, x.date)).sort();

/** Every job of a run's plan, at once. */
function runJobs(plan: RollupPlan): Promise<BatchResult[]> {
  return Promise.all(plan.batches.map((b) => rollupPartition(wh, { runId: plan.runId, asOf: plan.asOf, partitions: b.partitions })));
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  // Three hours from 22:00 the day before: every customer has two date partitions.
  await generateReports(wh.db, wh.layout, { customers: ['acme', 'globex'], streams: 2, sessions: 30, start: new Date(START.getTime() - 2 * 3_600_000), hours: 3, seed: 12 });
}, 60_000);

afterAll(async () => {
  await wh?.close();
});

describe('one build of a partition at a time', () => {
  it('two runs that need the same partitions at once build each of them once, and both publish from those states', async () => {
    const a = await planRollup(wh, { runId: rollupRunId(A), asOf: A, ownerPid: null });
    const b = await planRollup(wh, { runId: rollupRunId(B), asOf: B, ownerPid: null });
    const all = keys(a.decisions);
    expect(all).toHaveLength(4);
    expect(keys(b.decisions.filter((d) => d.action === 'rebuild'))).toEqual(all);

    const [ra, rb] = await Promise.all([runJobs(a), runJobs(b)]);
    const results = [...ra, ...rb];
    expect(keys(results.flatMap((r) => r.states))).toEqual(all);
    expect(keys(results.flatMap((r) => r.reused))).toEqual(all);
    expect([...(await readStates(wh.layout)).values()].map((list) => list.length)).toEqual([1, 1, 1, 1]);

    const published = [];
    for (const [plan, done] of [[a, ra], [b, rb]] as const) {
      const decisions = withReused(plan.decisions, done.flatMap((r) => r.reused));
      const r = await publishRollupOnce(wh, { runId: plan.runId, asOf: plan.asOf, customers: plan.customers, misplaced: plan.misplaced, decisions, startedAt: Date.now() });
      published.push(r.manifest!);
    }
    const [ma, mb] = published;
    expect(ma!.partitionStates!.rebuilt + mb!.partitionStates!.rebuilt).toBe(4);
    expect(ma!.partitionStates!.reused + mb!.partitionStates!.reused).toBe(4);
    const stateIds = (m: typeof ma) => m!.partitions.flatMap((p) => (p.states ?? []).map((s) => s.stateId)).sort();
    expect(stateIds(mb)).toEqual(stateIds(ma));
  });

  it('a job that finds its partitions built for the files as they are reuses them, unless a rebuild is asked for', async () => {
    const partitions = [...(await readStates(wh.layout)).values()].map((list) => ({ customerId: list[0]!.customerId, date: list[0]!.date }));
    const again = await rollupPartition(wh, { runId: 'retry', asOf: B, partitions });
    expect([again.states.length, again.reused.length]).toEqual([0, 4]);
    const rebuilt = await rollupPartition(wh, { runId: 'rebuild', asOf: B, partitions, rebuild: true });
    expect([rebuilt.states.length, rebuilt.reused.length]).toEqual([4, 0]);
  });
});
