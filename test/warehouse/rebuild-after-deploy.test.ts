// The rebuild after a deployment (docs/warehouse-state.md, "After a deployment"): a new version
// whose state SQL differs (simulated by P2PTEL_TEST_STATE_CODE_SALT, which salts the hash of the
// state code) publishes at its first run, reusing the stale states and rebuilding at most
// ROLLUP_REBUILD_BUDGET of them (asOf's date first, then customer by customer, newest first), beside the partitions with
// new files; runs converge to no stale state. Every snapshot equals the independent SQL over the
// raw files and a from-scratch run over the same files; a run killed mid-rebuild (SIGKILL of a
// child) is resumed by the next without loss or double counting; a change of the state layout
// (P2PTEL_TEST_STATE_LAYOUT_SALT) still rebuilds every state before publishing. `start`'s way
// (jobs/live-rebuild.ts): runs that rebuild no stale state while the partitions are rebuilt outside
// any run (jobs/rollup/rebuild-stale.ts), that process SIGKILLed mid-partition, each snapshot exact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { expectSnapshotMatchesIndependent } from '../helpers/figures-check.ts';
import { fixtureArgv } from '../helpers/fixtures.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline, type PipelineResult } from '../../jobs/pipeline.ts';
import { rebuildStalePartitions, stalePartitions } from '../../jobs/rollup/rebuild-stale.ts';
import { readStates, stateVersion, type StateMeta } from '../../warehouse/states/state-store.ts';
import { discoverLanding } from '../../warehouse/landing/landed-files.ts';
import { listFiles } from '../../lib/fsx.ts';
import { keepEnv } from '../helpers/env.ts';

const START = new Date('2026-11-16T00:00:00Z');
const HOUR = 3_600_000;
const at = (h: number) => new Date(START.getTime() + h * HOUR);
const CUSTOMERS = ['acme', 'globex'];
const CODE_SALT = 'P2PTEL_TEST_STATE_CODE_SALT';
const LAYOUT_SALT = 'P2PTEL_TEST_STATE_LAYOUT_SALT';
const BUDGET = 2;

let wh: TestWarehouse;
let scratch: TestWarehouse;
const restoreEnv = keepEnv(CODE_SALT, LAYOUT_SALT);

beforeAll(async () => {
  wh = await openTestWarehouse({ ROLLUP_REBUILD_BUDGET: String(BUDGET), COMPACTION_MIN_FILES: '1000', SNAPSHOT_DEBRIS_GRACE_SECONDS: '0' });
  scratch = await openTestWarehouse();
  // Three whole days and the first hours of a fourth, for two customers: 8 partitions, three days
  // past asOf's date a customer (the budget's order, customer by customer and newest first, shows
  // within a customer and across two).
  await generateReports(wh.db, wh.layout, { customers: CUSTOMERS, streams: 2, sessions: 20, start: START, hours: 72, seed: 49 });
  await generateReports(wh.db, wh.layout, { customers: CUSTOMERS, streams: 2, sessions: 10, start: at(72), hours: 3, seed: 50 });
}, 120_000);

afterAll(async () => {
  restoreEnv();
  await wh?.close();
  await scratch?.close();
});

/** New reports of hour h (the live path's new files: today's partitions). */
async function land(h: number): Promise<void> {
  await generateReports(wh.db, wh.layout, { customers: CUSTOMERS, streams: 2, sessions: 5, start: at(h), hours: 1, seed: 100 + h });
}

/** The snapshot against the independent SQL over the raw files and against a from-scratch run over the same files. */
async function expectExact(run: PipelineResult, what: string): Promise<void> {
  expect(run.published, what).toBe(true);
  await expectSnapshotMatchesIndependent(wh.db, wh.layout, run.manifest.snapshot, what);
  await fs.rm(scratch.layout.rawReports, { recursive: true, force: true });
  for (const f of (await discoverLanding(wh.layout)).files) {
    const to = path.join(scratch.layout.rawReports, f.relPath);
    await fs.mkdir(path.dirname(to), { recursive: true });
    await fs.copyFile(f.path, to);
  }
  const asOf = new Date(run.manifest.asOf);
  const base = await runPipeline(scratch, { asOf, rebuild: true, compact: false, replaceCurrent: true });
  expectSameSnapshotRows(await snapshotRows(wh.db, wh.layout, run.manifest.snapshot), await snapshotRows(scratch.db, scratch.layout, base.manifest.snapshot), what);
  expect(run.manifest.rows, what).toEqual(base.manifest.rows);
}

/** The state each partition's newest, by `customer/date`. */
async function newestStates(): Promise<Map<string, StateMeta>> {
  return new Map([...(await readStates(wh.layout))].map(([k, list]) => [k, list[0]!]));
}

const staleOf = (run: PipelineResult) => run.manifest.partitionStates!.stale ?? 0;
const rebuiltForCode = (run: PipelineResult) => run.manifest.partitionStates!.reasons['state code changed'] ?? 0;
/** The partitions a run rebuilt for a reason, as `customer/date`. */
const rebuiltFor = (run: PipelineResult, reason: string) =>
  run.manifest.partitions.flatMap((p) => (p.states ?? []).filter((s) => s.action === 'rebuild' && s.reason === reason).map((s) => `${p.customerId}/${s.date}`));

/** Whether the budget's order (past asOf's date) rebuilds partition `a` before `b` (`customer/date`): customer by customer, each one's newest date first. */
const rebuiltBefore = (a: string, b: string) => {
  const [ca, da] = a.split('/') as [string, string];
  const [cb, db] = b.split('/') as [string, string];
  return ca < cb || (ca === cb && da > db);
};

/** Whether a state is half-written (a .tmp- folder under the states). */
const tmpStates = async () => (await listFiles(wh.layout.state, '')).some((f) => f.includes(`${path.sep}.tmp-`));

/**
 * A fixture run in a child over the warehouse at `asOf` (its .tmp- folders held `holdMs` before
 * their rename), SIGKILLed as soon as `ready(output so far)` holds, unless it ended first (`done`).
 */
async function killedWhen(fixture: string, asOf: Date, holdMs: number, ready: (out: string) => Promise<boolean>): Promise<{ out: string; done: boolean }> {
  const child = spawn(process.execPath, fixtureArgv(fixture, wh.root, asOf.toISOString()), {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOLD_TMP_MS: String(holdMs) },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let done = false;
  void exited.then(() => (done = true));
  while (!done && !(await ready(out))) await new Promise((r) => setTimeout(r, 2));
  const ended = done;
  child.kill('SIGKILL');
  await exited;
  return { out, done: ended };
}

describe('the rebuild after a deployment', () => {
  let hour = 75;

  it('publishes at once with stale states reused, rebuilds a budget of them a run, today first, and converges', async () => {
    const first = await runPipeline(wh, { asOf: at(hour), compact: false });
    expect(first.manifest.partitionStates).toEqual({ reused: 0, rebuilt: 8, reasons: { 'no state yet': 8 } });
    const before = stateVersion();

    // The deployment: other state SQL, the same layout.
    process.env[CODE_SALT] = 'deploy-1';
    expect(stateVersion()).not.toBe(before);
    await land(hour);
    hour++;
    const deployed = await runPipeline(wh, { asOf: at(hour), compact: false });
    // Today's partitions (new files) are built by the new code; two stale ones more, the first
    // customer's two newest days (customer by customer, not date by date); the four others serve as they are.
    expect(deployed.manifest.partitionStates).toEqual({
      reused: 4,
      rebuilt: 4,
      reasons: { 'new files landed': 2, 'state code changed': BUDGET },
      stale: 4,
    });
    expect(rebuiltFor(deployed, 'new files landed').sort()).toEqual(CUSTOMERS.map((c) => `${c}/2026-11-19`));
    expect(rebuiltFor(deployed, 'state code changed').sort()).toEqual(['acme/2026-11-17', 'acme/2026-11-18']);
    expect(deployed.manifest.partitions.flatMap((p) => (p.states ?? []).filter((s) => s.reason === 'stale'))).toHaveLength(4);
    await expectExact(deployed, 'first run after the deployment');

    // Each later run rebuilds at most the budget, customer by customer, newest first, until none is stale.
    let left = staleOf(deployed);
    let runs = 0;
    while (left > 0) {
      await land(hour);
      hour++;
      const run = await runPipeline(wh, { asOf: at(hour), compact: false });
      expect(rebuiltForCode(run)).toBe(Math.min(BUDGET, left));
      expect(staleOf(run)).toBe(left - Math.min(BUDGET, left));
      const rebuiltKeys = rebuiltFor(run, 'state code changed');
      const staleKeys = run.manifest.partitions.flatMap((p) => (p.states ?? []).filter((s) => s.reason === 'stale').map((s) => `${p.customerId}/${s.date}`));
      for (const r of rebuiltKeys) for (const k of staleKeys) expect(rebuiltBefore(r, k), `${r} rebuilt before ${k}`).toBe(true);
      await expectExact(run, `run ${++runs} of the rebuild`);
      left = staleOf(run);
    }
    expect(runs).toBe(Math.ceil(4 / BUDGET));
    for (const m of (await newestStates()).values()) expect(m.stateVersion).toBe(stateVersion());
    // Over: the next run rebuilds nothing but today's new files, and says nothing of a rebuild.
    await land(hour);
    hour++;
    const after = await runPipeline(wh, { asOf: at(hour), compact: false });
    expect(after.manifest.partitionStates!.stale).toBeUndefined();
    expect(rebuiltForCode(after)).toBe(0);
  }, 600_000);

  it('resumes a run killed mid-rebuild without losing or doubling a report', async () => {
    process.env[CODE_SALT] = 'deploy-2';
    await land(hour);
    hour++;
    const asOf = at(hour);
    const staleBefore = [...(await newestStates()).values()].filter((m) => m.stateVersion !== stateVersion()).length;
    expect(staleBefore).toBe(8);
    // A run in a child (its own budget: the default), killed while it writes the rebuilt states.
    const { out, done } = await killedWhen('pipeline-run.ts', asOf, 2000, () => tmpStates());
    expect(done, `the run ended before it wrote a state: ${out}`).toBe(false);
    expect(out).not.toContain('DONE');

    // The next runs go on with what is still stale, each snapshot exact, until none is: a budget
    // of 4 (two runs; the first test walks a budget of 2 run by run).
    const wider = { ...wh, config: { ...wh.config, rebuild: { ...wh.config.rebuild, budgetPartitions: 4 } } };
    let left = Infinity;
    let runs = 0;
    while (left > 0) {
      const run = await runPipeline(wider, { asOf: at(hour), compact: false });
      await expectExact(run, `run ${++runs} after the kill`);
      expect(staleOf(run)).toBeLessThan(left);
      left = staleOf(run);
      await land(hour);
      hour++;
    }
    expect(runs).toBeLessThanOrEqual(Math.ceil(8 / 4));
    for (const m of (await newestStates()).values()) expect(m.stateVersion).toBe(stateVersion());
  }, 600_000);

  it('rebuilds every state before publishing when the layout changes, or when the budget is 0', async () => {
    process.env[LAYOUT_SALT] = 'layout-2';
    const layoutRun = await runPipeline(wh, { asOf: at(hour), compact: false });
    const partitions = layoutRun.manifest.partitionStates!.reused + layoutRun.manifest.partitionStates!.rebuilt;
    expect(layoutRun.manifest.partitionStates).toEqual({ reused: 0, rebuilt: partitions, reasons: { 'state layout changed': partitions } });
    await expectExact(layoutRun, 'after a layout change');

    process.env[CODE_SALT] = 'deploy-3';
    const blocking = { ...wh, config: { ...wh.config, rebuild: { ...wh.config.rebuild, budgetPartitions: 0 } } };
    const run = await runPipeline(blocking, { asOf: at(hour), compact: false });
    expect(run.manifest.partitionStates).toEqual({ reused: 0, rebuilt: partitions, reasons: { 'state code changed': partitions } });
    await expectExact(run, 'budget 0');
  }, 600_000);

  it("start's way: runs rebuild no stale state while they are rebuilt outside any run, killed mid-partition, then resumed", async () => {
    process.env[CODE_SALT] = 'deploy-4';
    const asOf = at(hour);
    const partitions = (await newestStates()).size;
    expect([...(await newestStates()).values()].filter((m) => m.stateVersion !== stateVersion())).toHaveLength(partitions);
    // The order of a run's budget: asOf's date first, then customer by customer, newest first.
    const stale = await stalePartitions(wh, asOf);
    expect(stale).toHaveLength(partitions);
    const today = asOf.toISOString().slice(0, 10);
    const keys = stale.map((p) => `${p.customerId}/${p.date}`);
    expect(keys).toEqual([...keys.filter((k) => k.endsWith(today)).sort(), ...keys.filter((k) => !k.endsWith(today)).sort((a, b) => (rebuiltBefore(a, b) ? -1 : 1))]);

    // A run that rebuilds no stale state: every partition serves stale, the snapshot exact.
    const first = await runPipeline(wh, { asOf, compact: false, rebuildStale: false });
    expect(first.manifest.partitionStates).toEqual({ reused: partitions, rebuilt: 0, reasons: {}, stale: partitions });
    await expectExact(first, 'all stale, none rebuilt by the run');

    // The rebuild outside any run, in a child killed while it writes a state.
    // Past the first partition, so that the kill leaves some rebuilt and some stale.
    const { out, done } = await killedWhen('rebuild-stale-run.ts', asOf, 1500, async (sofar) => sofar.includes('REBUILT') && (await tmpStates()));
    expect(done, `the rebuild ended before it wrote a second state: ${out}`).toBe(false);
    expect(out).not.toContain('DONE');
    const rebuiltBeforeKill = out.split('\n').filter((l) => l.startsWith('REBUILT')).length;
    expect(rebuiltBeforeKill).toBeGreaterThanOrEqual(1);
    expect(rebuiltBeforeKill).toBeLessThan(partitions);

    // The next run uses what the child rebuilt (this code's states, not rebuilt again) and the rest stale.
    const mid = await runPipeline(wh, { asOf, compact: false, rebuildStale: false });
    expect(mid.manifest.partitionStates).toEqual({ reused: partitions, rebuilt: 0, reasons: {}, stale: partitions - rebuiltBeforeKill });
    await expectExact(mid, 'after the kill, part rebuilt outside the runs');

    // The rebuild resumed with what is still stale, new reports landing meanwhile (in today's partitions).
    const rest = await stalePartitions(wh, asOf);
    expect(rest).toHaveLength(partitions - rebuiltBeforeKill);
    await land(hour);
    hour++;
    // In steps of two, as the lane does (a step is one job of a few partitions).
    for (let i = 0; i < rest.length; i += 2) {
      const step = rest.slice(i, i + 2);
      expect((await rebuildStalePartitions(wh, step, at(hour))).states.map((m) => m.stateVersion)).toEqual(step.map(() => stateVersion()));
    }
    expect(await stalePartitions(wh, at(hour))).toEqual([]);
    const last = await runPipeline(wh, { asOf: at(hour), compact: false, rebuildStale: false });
    expect(last.manifest.partitionStates!.stale).toBeUndefined();
    expect(last.manifest.partitionStates!.reasons['state code changed']).toBeUndefined();
    await expectExact(last, 'the rebuild outside the runs over');
    for (const m of (await newestStates()).values()) expect(m.stateVersion).toBe(stateVersion());
  }, 600_000);
});
