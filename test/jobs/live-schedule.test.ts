// Rollups at an interval on real worker processes (real Redis, real DuckDB, real files): ticks that
// fire while a run is in flight are coalesced, never piling runs up; fire times that pass while no
// worker can take their tick are counted as missed; and a publisher killed while it holds the
// publish lock delays publication by about one tick. Each is visible in `runs` and /metrics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { cli } from '../helpers/cli.ts';
import { jobConfig, jobEnv, killAllWorkers, readyWorker, testQueues, uniquePrefix, type WorkerProcess } from '../helpers/jobs.ts';
import { recordAndInstall } from '../../cli/actions/schedule.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import type { Queues } from '../../jobs/queue/client.ts';
import { listRuns, type RunInfo } from '../../jobs/queue/runs.ts';
import { waitForRun } from '../../jobs/queue/enqueue.ts';
import { readSnapshotManifest } from '../../warehouse/snapshots/snapshot-manifest.ts';
import { publishedDir, readCurrent, readHistory, snapshotFiles, type CurrentPointer } from '../../warehouse/snapshots/snapshot-folders.ts';

let wh: TestWarehouse;
let env: Record<string, string>;
let queues: Queues;

const FOLLOW_UP = 'started the run of the ticks coalesced behind the run that ended';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The samples of a worker's /metrics, by name and labels. */
async function metrics(w: WorkerProcess): Promise<Map<string, number>> {
  const url = String((await w.waitForLog((l) => l.msg === 'worker ready'))['metrics']);
  const text = await (await fetch(url)).text();
  return new Map(text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]));
}

/**
 * What `p2ptel schedule` with these settings does (cli/actions/schedule.ts), in this process: the
 * command itself is tested in schedule.test.ts and cli.test.ts; a process for each change of the
 * schedule here cost about a second of CPU time.
 */
async function schedule(settings: Record<string, string>): Promise<void> {
  await recordAndInstall(queues, jobConfig({ ...env, ...settings }));
}

/** Back to the 5-minute cron (no more ticks during the test; the batch cadence since the default is live), then wait until no run is in flight. */
async function stopTicking(): Promise<RunInfo[]> {
  await schedule({ ROLLUP_BATCH: '1' });
  for (let i = 0; i < 100; i++) {
    const runs = await listRuns(queues, 200);
    if (!runs.some((r) => ['queued', 'planning', 'running', 'publishing', 'retrying'].includes(r.state))) return runs;
    await sleep(250);
  }
  throw new Error('runs still in flight 25 s after the ticks stopped');
}

/** Until the runs so far satisfy `enough` (polled, at most `timeoutMs`: the assertions after say what was missing). */
async function ticking(enough: (runs: RunInfo[]) => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !enough(await listRuns(queues, 200))) await sleep(250);
}

/** CURRENT once it differs from `before`, and when that was seen. */
async function nextPublication(before: CurrentPointer | null, timeoutMs: number): Promise<{ current: CurrentPointer; at: number }> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const current = await readCurrent(wh.layout);
    if (current && current.snapshot !== before?.snapshot) return { current, at: Date.now() };
    await sleep(50);
  }
  throw new Error(`nothing published within ${timeoutMs} ms`);
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  // Every tick runs (ROLLUP_IDLE_SECONDS 0): these tests are about runs in flight, not idle ticks.
  env = jobEnv(wh.root, uniquePrefix('live'), { WORKER_METRICS_PORT: '0', ROLLUP_IDLE_SECONDS: '0' });
  await generateReports(wh.db, wh.layout, { customers: ['acme', 'globex'], streams: 2, sessions: 20, start: new Date(Date.now() - 2 * 3_600_000), hours: 2, seed: 30 });
  queues = await testQueues(env);
}, 60_000);

afterAll(async () => {
  await killAllWorkers();
  await queues?.close();
  await wh?.close();
});

describe('rollups every second or two', () => {
  it('coalesces ticks that fire while a run is in flight: runs never overlap, the latest such tick runs as soon as the run ends, and runs and /metrics show them', async () => {
    // Locks of 10 s: no worker dies here, and a loaded machine that stalled a renewal past the
    // usual 2 s would make the gate judge the run in flight dead and start the next beside it.
    const worker = await readyWorker({ ...env, WORKER_LOCK_DURATION_MS: '10000', WORKER_STALLED_INTERVAL_MS: '5000' }, { fixture: 'worker-slow-publish.ts', args: ['slow:2500'] });
    const followUpAsOfs = () => new Set(worker.logs.filter((l) => l.msg === FOLLOW_UP).map((l) => String(l['asOf'])));
    await schedule({ ROLLUP_EVERY: '1s' });
    await ticking(
      (runs) => {
        const done = runs.filter((r) => r.kind === 'rollup' && r.state === 'completed');
        const coalesced = runs.filter((r) => r.state === 'coalesced');
        // Two coalesced ticks ahead of the completed runs: the run in flight and the follow-up of
        // the ticks coalesced behind it may still complete once the ticks stop.
        return done.length >= 2 && done.some((r) => followUpAsOfs().has(r.asOf)) && coalesced.length >= done.length + 2;
      },
      30_000,
    );
    const runs = await stopTicking();

    const done = runs.filter((r) => r.kind === 'rollup' && r.state === 'completed');
    const coalesced = runs.filter((r) => r.state === 'coalesced');
    expect(done.length).toBeGreaterThanOrEqual(2);
    expect(coalesced.length).toBeGreaterThanOrEqual(done.length);
    const spans = done.map((r) => [r.startedAt!, r.finishedAt!] as const).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]);
    // A run started for the ticks coalesced behind the run in flight, once that run had published:
    // as of that moment, past the coalesced fire time, so that it holds back no report that
    // landed since that fire time; the other runs are as of a fire time of the interval (a whole
    // second).
    const followUps = done.filter((r) => followUpAsOfs().has(r.asOf));
    expect(followUps.length).toBeGreaterThan(0);
    for (const l of worker.logs.filter((x) => x.msg === FOLLOW_UP)) {
      const run = followUps.find((r) => r.asOf === l['asOf']);
      if (!run) continue;
      expect(coalesced.map((c) => c.asOf)).toContain(l['coalesced']);
      // Not before the fire time, nor after the run started (a tick may be taken up to a period
      // before its fire time, and the run is then as of that fire time): tick-gate.test.ts
      // checks the asOf itself, with a clock of its own.
      expect(Date.parse(run.asOf)).toBeGreaterThanOrEqual(Date.parse(String(l['coalesced'])));
      expect(Date.parse(run.asOf)).toBeLessThanOrEqual(run.startedAt! + 1000);
    }
    expect(done.filter((r) => !followUps.includes(r) && Date.parse(r.asOf) % 1000 !== 0)).toEqual([]);

    // CURRENT only moved forward, and every "snapshot published" line was a publication.
    const asOfs = [];
    for (const s of await readHistory(wh.layout)) asOfs.push((await readSnapshotManifest(snapshotFiles(publishedDir(wh.layout, s)).manifest)).asOf);
    expect(asOfs).toEqual([...asOfs].sort());
    const said = worker.logs.filter((l) => l.msg === 'snapshot published');
    expect(said.length).toBe(done.length);
    expect(said.every((l) => l['published'] === true)).toBe(true);

    const m = await metrics(worker);
    expect(m.get('p2ptel_schedule_ticks_total{schedule="rollup",outcome="coalesced"}')).toBe(coalesced.length);
    expect(m.get('p2ptel_schedule_ticks_total{schedule="rollup",outcome="started"}')).toBe(done.length - followUps.length);
    const table = await cli(['runs', '--limit', '100'], env);
    expect(table.stdout).toMatch(/^rollup\s+\S+\s+coalesced\s+-\s+-\s+-\s+-\s+a run was in flight \(asOf \S+\): coalesced into the next run/m);

    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  });

  it('counts fire times that pass while no worker can take their tick as missed, in runs and /metrics', async () => {
    const first = await readyWorker(env);
    await schedule({ ROLLUP_EVERY: '1s' });
    await first.waitForLog((l) => l.msg === 'job done' && l['job'] === 'tick', 10_000);
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    await sleep(3500);

    const second = await readyWorker(env);
    const said = await second.waitForLog((l) => l.msg === 'fire times missed: no worker took their tick in time', 15_000);
    expect(said['count']).toBeGreaterThanOrEqual(2);
    await stopTicking();
    // The tick that said so records its missed fire times when it completes, which may be just
    // after the line (the runs listed by stopTicking wait for runs, not for ticks).
    let missed: RunInfo[] = [];
    await ticking((runs) => (missed = runs.filter((r) => r.state === 'missed')).some((r) => r.asOf === said['first']), 10_000);
    expect(missed.map((r) => r.asOf)).toContain(said['first']);
    expect(missed.find((r) => r.asOf === said['first'])!.note).toContain(`${String(said['count'])} fire time(s) passed with no tick`);
    expect((await metrics(second)).get('p2ptel_schedule_ticks_total{schedule="rollup",outcome="missed"}')).toBe(said['count']);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });

  it('a publisher killed while it holds the publish lock delays publication by about one tick', async () => {
    // Locks of BullMQ's own that a dead worker keeps for 30 s: the tier must not wait for them.
    const slowLocks = { ...env, WORKER_LOCK_DURATION_MS: '30000', WORKER_STALLED_INTERVAL_MS: '30000' };
    const holder = await readyWorker(slowLocks, { fixture: 'worker-slow-publish.ts', args: ['hold-lock'] });
    await schedule({ ROLLUP_EVERY: '2s' });
    await holder.waitForStdout('HOLDING ', 30_000);
    const other = await readyWorker(slowLocks);
    const before = await readCurrent(wh.layout);
    // While its publisher lives, the held run is in flight: later ticks wait behind it.
    await sleep(3000);
    expect(await readCurrent(wh.layout)).toEqual(before);
    expect([...holder.logs, ...other.logs].some((l) => String(l.msg).startsWith('tick coalesced'))).toBe(true);

    holder.child.kill('SIGKILL');
    const killedAt = Date.now();
    await holder.exited;
    const next = await nextPublication(before, 30_000);
    const run = await waitForRun(queues, 'rollup', new Date(next.current.asOf), { timeoutMs: 30_000 });
    expect(run.state).toBe('completed');
    // The next tick started a run (within one tick of the kill), and that run published.
    expect(run.startedAt! - killedAt).toBeLessThan(2000 + 1500);
    expect(next.at - killedAt).toBeLessThan(2000 + run.durationMs! + 1500);

    // (The dead run is retaken once its BullMQ lock lapses, and discarded for the later asOf.)
    await schedule({ ROLLUP_BATCH: '1' });
    other.child.kill('SIGTERM');
    expect((await other.exited).code).toBe(0);
  });
});
