// Schedules (BullMQ job schedulers on a real Redis): installing them twice leaves one of each,
// a new pattern replaces the old one in place, and a scheduler's tick starts the run named by its
// fire time.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { cli } from '../helpers/cli.ts';
import { jobEnv, killAllWorkers, readyWorker, testQueues, uniquePrefix } from '../helpers/jobs.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import type { Queues } from '../../jobs/queue/client.ts';
import { waitForRun } from '../../jobs/queue/enqueue.ts';
import { JOBS } from '../../jobs/queue/names.ts';
import { scheduledAsOf } from '../../jobs/queue/fire-time.ts';
import { readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';

let wh: TestWarehouse;
let env: Record<string, string>;
let queues: Queues;

async function ticks(queue: Queues['rollup']) {
  return (await queue.getJobs(['delayed', 'waiting'])).filter((j) => j.name === JOBS.tick);
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  // Ticks are promoted before their fire time (up to a rollup period ahead): allow that asOf skew.
  env = jobEnv(wh.root, uniquePrefix('schedule'), { AS_OF_MAX_SKEW_SECONDS: '86400' });
  queues = await testQueues(env);
}, 60_000);

afterAll(async () => {
  await killAllWorkers();
  await queues?.close();
  await wh?.close();
});

describe('schedules', () => {
  it('installed twice, there is one schedule of each kind, on UTC cron patterns (the batch cadence: --batch)', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await cli(['schedule', '--batch'], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^rollup\s+\*\/5 \* \* \* \*\s+\d{4}-\d\d-\d\dT\d\d:\d[05]:00.000Z/m);
      expect(r.stdout).toMatch(/^reports\s+0 2 \* \* \*\s+\d{4}-\d\d-\d\dT02:00:00.000Z/m);
    }
    const rollup = await queues.rollup.getJobSchedulers();
    const reports = await queues.reports.getJobSchedulers();
    expect(rollup.map((s) => [s.key, s.pattern, s.tz])).toEqual([['rollup', '*/5 * * * *', 'UTC']]);
    expect(reports.map((s) => [s.key, s.pattern, s.tz])).toEqual([['reports', '0 2 * * *', 'UTC']]);
    // One pending tick each: nothing doubled either.
    expect(await ticks(queues.rollup)).toHaveLength(1);
    expect(await ticks(queues.reports)).toHaveLength(1);
  });

  it('installed with another pattern, the schedule changes in place', async () => {
    const r = await cli(['schedule', '--rollup-cron', '*/10 * * * *', '--reports-cron', '30 3 * * *'], env);
    expect(r.code, r.stderr).toBe(0);
    expect((await queues.rollup.getJobSchedulers()).map((s) => s.pattern)).toEqual(['*/10 * * * *']);
    expect((await queues.reports.getJobSchedulers()).map((s) => s.pattern)).toEqual(['30 3 * * *']);
    expect(await ticks(queues.rollup)).toHaveLength(1);
    const [next] = await ticks(queues.rollup);
    expect(new Date(next!.opts.prevMillis!).getUTCMinutes() % 10).toBe(0);
    expect((await ticks(queues.reports)).map((t) => new Date(t.opts.prevMillis!).toISOString().slice(11))).toEqual(['03:30:00.000Z']);
    const listed = await cli(['schedule', '--list'], env);
    expect(listed.stdout.match(/^(rollup|reports)(?=\s)/gm)).toEqual(['rollup', 'reports']);
  });

  it('a tick starts the run whose asOf is its fire time', async () => {
    await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 1, sessions: 20, start: new Date(Date.now() - 3_600_000), hours: 1, seed: 3 });
    const worker = await readyWorker(env);
    for (const queue of [queues.rollup, queues.reports]) {
      const [tick] = await ticks(queue);
      const fireTime = new Date(tick!.opts.prevMillis!);
      await tick!.promote(); // now rather than at its fire time
      const kind = queue === queues.rollup ? 'rollup' : 'reports';
      const run = await waitForRun(queues, kind, fireTime, { timeoutMs: 60_000 });
      expect(run.state, run.error ?? '').toBe('completed');
      expect(run.asOf).toBe(fireTime.toISOString());
      if (kind === 'rollup') expect((await readCurrent(wh.layout))!.asOf).toBe(fireTime.toISOString());
    }
    // The scheduler queued the following tick of each.
    expect(await ticks(queues.rollup)).toHaveLength(1);
    expect(await ticks(queues.reports)).toHaveLength(1);
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  });

  it('--rollup-every installs an interval scheduler whose fire times are multiples of it, and --rollup-cron puts the cron back', async () => {
    const r = await cli(['schedule', '--rollup-every', '2s'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^rollup\s+every 2s\s+\d{4}-\d\d-\d\dT/m);
    const [scheduler] = await queues.rollup.getJobSchedulers();
    expect([scheduler!.key, scheduler!.every, scheduler!.pattern ?? null]).toEqual(['rollup', 2000, null]);
    const [next] = await ticks(queues.rollup);
    expect(scheduledAsOf(next!).getTime() % 2000).toBe(0);
    expect(scheduledAsOf(next!).getTime()).toBeGreaterThan(Date.now() - 2000);
    expect(await ticks(queues.rollup)).toHaveLength(1);
    // The report schedule is untouched.
    expect((await queues.reports.getJobSchedulers()).map((s) => s.pattern)).toEqual(['0 2 * * *']);
    expect((await cli(['schedule', '--list'], env)).stdout).toMatch(/^rollup\s+every 2s\s/m);

    const back = await cli(['schedule', '--batch'], env);
    expect(back.code, back.stderr).toBe(0);
    expect((await queues.rollup.getJobSchedulers()).map((s) => [s.pattern, s.every ?? null])).toEqual([['*/5 * * * *', null]]);
    expect(await ticks(queues.rollup)).toHaveLength(1);
  });
});
