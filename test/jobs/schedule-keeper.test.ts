// The worker tier on its defaults, on a redis-server of this test's own (no persistence, so that a
// restart loses everything): `schedule` alone installs the live cadence and writes it with the
// warehouse; an idle tier publishes nothing new; new files are rolled up within a few ticks; and
// after Redis restarts empty, or is flushed, the workers reinstall the schedules by themselves,
// say so in their logs and /metrics, and runs resume.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { cli } from '../helpers/cli.ts';
import { jobEnv, killAllWorkers, readyWorker, testQueues, uniquePrefix, type WorkerProcess } from '../helpers/jobs.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import type { Queues } from '../../jobs/queue/client.ts';
import { listRuns } from '../../jobs/queue/runs.ts';
import { readCurrent, type CurrentPointer } from '../../warehouse/snapshots/snapshot-folders.ts';
import { readDesiredSchedule } from '../../control/schedule.ts';

let wh: TestWarehouse;
let redis: RedisServer;
let env: Record<string, string>;
let queues: Queues;
let worker: WorkerProcess;
let seed = 40;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function metrics(w: WorkerProcess): Promise<Map<string, number>> {
  const url = String((await w.waitForLog((l) => l.msg === 'worker ready'))['metrics']);
  const text = await (await fetch(url)).text();
  return new Map(text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]));
}

/** CURRENT once it differs from `before`. */
async function nextPublication(before: CurrentPointer | null, timeoutMs: number): Promise<CurrentPointer> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const current = await readCurrent(wh.layout);
    if (current && current.snapshot !== before?.snapshot) return current;
    await sleep(100);
  }
  throw new Error(`nothing published within ${timeoutMs} ms`);
}

/** New reports of the last hour landed (as a collector would land them). */
async function landMore(): Promise<void> {
  await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 1, sessions: 10, start: new Date(Date.now() - 3_600_000), hours: 1, seed: seed++ });
}

async function noRunInFlight(): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (!(await listRuns(queues, 200)).some((r) => ['queued', 'planning', 'running', 'publishing', 'retrying'].includes(r.state))) return;
    await sleep(250);
  }
  throw new Error('runs still in flight after 25 s');
}

async function files(dir: string): Promise<number> {
  return (await fs.readdir(dir, { recursive: true }).catch(() => [] as string[])).length;
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  await generateReports(wh.db, wh.layout, { customers: ['acme', 'globex'], streams: 2, sessions: 20, start: new Date(Date.now() - 2 * 3_600_000), hours: 2, seed: 39 });
  redis = await startRedisServer();
  env = jobEnv(wh.root, uniquePrefix('keeper'), { REDIS_URL: redis.url, WORKER_METRICS_PORT: '0' });
  queues = await testQueues(env);
}, 60_000);

afterAll(async () => {
  await killAllWorkers();
  await queues?.close();
  await redis?.stop();
  await wh?.close();
});

describe('the worker tier on its defaults', () => {
  it('`schedule` alone installs a rollup every 2 s (and the nightly reports and compaction), written with the warehouse', async () => {
    const r = await cli(['schedule'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^rollup\s+every 2s\s/m);
    expect(r.stdout).toMatch(/^reports\s+0 2 \* \* \*\s/m);
    expect(r.stdout).toMatch(/^compaction\s+every 1m\s/m);
    const [rollup] = await queues.rollup.getJobSchedulers();
    expect([rollup!.every, rollup!.pattern ?? null]).toEqual([2000, null]);
    expect(await readDesiredSchedule(wh.layout, env['QUEUE_PREFIX']!)).toMatchObject({ rollupEveryMs: 2000, reports: '0 2 * * *', compactEveryMs: 60_000 });
  });

  it('rolls up what lands within a few ticks, and publishes nothing while nothing lands', async () => {
    worker = await readyWorker(env);
    await nextPublication(null, 30_000);
    // Ticks become idle, and the runs started meanwhile (ticks coalesced behind the first) end.
    for (let i = 0; i < 100 && !((await metrics(worker)).get('p2ptel_schedule_ticks_total{schedule="rollup",outcome="idle"}') ?? 0); i++) await sleep(250);
    await noRunInFlight();
    const idle = await readCurrent(wh.layout);
    const counts = [await files(wh.layout.snapshots), await files(wh.layout.state)];
    await sleep(6500); // three ticks or more
    expect(await readCurrent(wh.layout)).toEqual(idle);
    expect([await files(wh.layout.snapshots), await files(wh.layout.state)]).toEqual(counts);
    expect((await metrics(worker)).get('p2ptel_schedule_ticks_total{schedule="rollup",outcome="idle"}')).toBeGreaterThanOrEqual(3);

    await landMore();
    const next = await nextPublication(idle, 20_000);
    expect(Date.parse(next.asOf)).toBeGreaterThan(Date.parse(idle!.asOf));
  });

  it('reinstalls the schedules when Redis restarts empty or is flushed, says so, and runs resume', async () => {
    await redis.restart();
    const said = await worker.waitForLog((l) => String(l.msg).startsWith('schedules missing in Redis'), 30_000);
    expect(said['missing']).toEqual(['rollup', 'reports', 'compaction']);
    expect((await queues.rollup.getJobSchedulers()).map((s) => s.every)).toEqual([2000]);
    expect((await queues.reports.getJobSchedulers()).map((s) => s.pattern)).toEqual(['0 2 * * *']);
    const before = await readCurrent(wh.layout);
    await landMore();
    await nextPublication(before, 30_000);

    await queues.client.flushall();
    const reinstalled = () => worker.logs.filter((l) => String(l.msg).startsWith('schedules missing in Redis')).length;
    for (let i = 0; i < 120 && reinstalled() < 2; i++) await sleep(250);
    expect(reinstalled()).toBe(2);
    expect((await metrics(worker)).get('p2ptel_schedules_reinstalled_total')).toBe(2);
    const again = await readCurrent(wh.layout);
    await landMore();
    await nextPublication(again, 30_000);

    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  });
});
