// The worker tier when things go wrong (real Redis, real worker processes, real files): a worker
// killed with SIGKILL in the middle of a partition job, a partition that keeps failing, and
// SIGTERM with no job, a job that finishes within the grace time, and one that does not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { cli } from '../helpers/cli.ts';
import { jobEnv, killAllWorkers, readyWorker, testQueues, uniquePrefix } from '../helpers/jobs.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { buildDir, publishedDir, readCurrent, readHistory, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import { readSnapshotManifest, type SnapshotManifest } from '../../warehouse/snapshots/snapshot-manifest.ts';
import { listFiles } from '../../lib/fsx.ts';
import type { Queues } from '../../jobs/queue/client.ts';
import { enqueueRun, waitForRun } from '../../jobs/queue/enqueue.ts';
import { PartitionPayload } from '../../jobs/queue/payloads.ts';
import { rollupRunId } from '../../jobs/queue/names.ts';

const CUSTOMERS = ['acme', 'globex', 'initech'];
const START = new Date('2026-11-20T00:00:00Z');
const at = (minute: number) => new Date(START.getTime() + 2 * 3_600_000 + minute * 60_000);

let wh: TestWarehouse;
let env: Record<string, string>;
let queues: Queues;

async function manifestsOf(runId: string): Promise<SnapshotManifest[]> {
  const out: SnapshotManifest[] = [];
  for (const s of await readHistory(wh.layout)) {
    const m = await readSnapshotManifest(snapshotFiles(publishedDir(wh.layout, s)).manifest);
    if (m.runId === runId) out.push(m);
  }
  return out;
}

async function partitionJobsOf(runId: string) {
  const jobs = await queues.partitions.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed']);
  return jobs.filter((j) => PartitionPayload.safeParse(j.data).data?.runId === runId);
}

/** Every partition state goes: the next run has a job per customer, as on a fresh warehouse. */
async function forgetStates(): Promise<void> {
  await fs.rm(wh.layout.state, { recursive: true, force: true });
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  env = jobEnv(wh.root, uniquePrefix('crash'));
  await generateReports(wh.db, wh.layout, { customers: CUSTOMERS, streams: 2, sessions: 40, start: START, hours: 3, seed: 5 });
  queues = await testQueues(env);
}, 120_000);

afterAll(async () => {
  await killAllWorkers();
  await queues?.close();
  await wh?.close();
});

describe('worker crashes and failures', () => {
  it('a worker killed with SIGKILL in the middle of a partition job: the job is taken up again and one complete snapshot is published', async () => {
    const asOf = at(0);
    const runId = rollupRunId(asOf);
    // This worker computes its first partition, then hangs before BullMQ hears it finished.
    const doomed = await readyWorker(env, { fixture: 'worker-holding-partition.ts', args: ['done-then-hang'] });
    await enqueueRun(queues, { attempts: 2, backoffMs: 200 }, 'rollup', asOf);
    await doomed.waitForStdout('HOLDING ');
    const heldId = /HOLDING (\S+)/.exec(doomed.stdout())![1]!;
    expect((await queues.partitions.getJob(heldId))?.processedBy).toBe(`${os.hostname()}#${doomed.pid}`);
    doomed.child.kill('SIGKILL');
    await doomed.exited;

    // A fresh worker finds the dead worker's job once its lock has expired, and finishes the run.
    const rescuer = await readyWorker(env);
    const run = await waitForRun(queues, 'rollup', asOf, { timeoutMs: 60_000 });
    expect(run.state, run.error ?? '').toBe('completed');
    expect(rescuer.logs.some((l) => l.msg?.startsWith('stalled job') && l['jobId'] === heldId)).toBe(true);

    const held = (await queues.partitions.getJob(heldId))!;
    expect(held.stalledCounter).toBe(1);
    expect(held.processedBy).toBe(`${os.hostname()}#${rescuer.pid}`);
    expect(held.attemptsMade).toBe(1);
    expect(held.attemptsStarted).toBe(2);

    // One snapshot of this run, complete, with the figures of an inline run of the same asOf.
    const made = await manifestsOf(runId);
    expect(made).toHaveLength(1);
    expect(made[0]!.partitions.map((p) => p.customerId)).toEqual(CUSTOMERS);
    expect((await readCurrent(wh.layout))!.snapshot).toBe(made[0]!.snapshot);
    const files = await listFiles(publishedDir(wh.layout, made[0]!.snapshot), '');
    expect(files.filter((f) => f.includes('.tmp-') || f.endsWith('owner.json'))).toEqual([]);
    expect((await fs.readdir(wh.layout.snapshots)).filter((n) => n.startsWith('.build-'))).toEqual([]);

    const flowRows = await snapshotRows(wh.db, wh.layout, made[0]!.snapshot);
    const inline = await runPipeline(wh, { asOf });
    expectSameSnapshotRows(flowRows, await snapshotRows(wh.db, wh.layout, inline.manifest.snapshot));
    expect(made[0]!.rows).toEqual(inline.manifest.rows);

    rescuer.child.kill('SIGTERM');
    expect((await rescuer.exited).code).toBe(0);
  });

  it('a partition that fails after its retries fails the run, nothing is published, and enqueuing it again retries it', async () => {
    const asOf = at(5);
    const runId = rollupRunId(asOf);
    const history = await readHistory(wh.layout);
    // A file where globex's partition states must go: its partition job fails on every attempt.
    await forgetStates();
    const obstacle = path.join(wh.layout.state, 'customer=globex');
    await fs.mkdir(path.dirname(obstacle), { recursive: true });
    await fs.writeFile(obstacle, 'in the way');

    const worker = await readyWorker(env);
    const failed = await cli(['enqueue', 'rollup', '--as-of', asOf.toISOString(), '--wait'], env);
    expect(failed.code).toBe(1);
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed.stderr).toMatch(/^error: rollup run 2026-11-20T02:05:00.000Z failed: partition globex failed after 2 attempt\(s\): /);
    expect(await readHistory(wh.layout)).toEqual(history);
    expect(await manifestsOf(runId)).toEqual([]);

    const globex = (await partitionJobsOf(runId)).find((j) => PartitionPayload.parse(j.data).partitions[0]!.customerId === 'globex')!;
    expect(await globex.getState()).toBe('failed');
    expect(globex.attemptsMade).toBe(2);
    expect(globex.failedReason).toMatch(/EEXIST|ENOTDIR|exists/);
    const listed = await cli(['runs'], env);
    expect(listed.stdout).toMatch(/rollup\s+2026-11-20T02:05:00.000Z\s+failed\s+.*partition globex failed after 2 attempt\(s\)/);

    await fs.rm(obstacle);
    const retried = await cli(['enqueue', 'rollup', '--as-of', asOf.toISOString(), '--wait'], env);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toContain('had failed (partition globex failed after 2 attempt(s)');
    expect(retried.stdout).toMatch(/completed in .*: snapshot \S+ published/);
    const made = await manifestsOf(runId);
    expect(made).toHaveLength(1);
    expect(made[0]!.partitions.map((p) => p.customerId)).toEqual(CUSTOMERS);
    // The failed run's jobs went with the retry; only the new run's partitions are left.
    expect((await partitionJobsOf(runId)).map((j) => j.id)).not.toContain(globex.id);

    // SIGTERM with nothing to do: out at once, exit 0.
    const sent = Date.now();
    worker.child.kill('SIGTERM');
    const exit = await worker.exited;
    expect(exit.code).toBe(0);
    expect(exit.at - sent).toBeLessThan(5000);
    expect(worker.logs.some((l) => l.msg === 'worker stopped')).toBe(true);
  });

  it('SIGTERM during a job that finishes within the grace time: the job completes, then the worker exits 0', async () => {
    const asOf = at(10);
    await forgetStates();
    const slow = await readyWorker(env, { fixture: 'worker-holding-partition.ts', args: ['slow:1500'] });
    await enqueueRun(queues, { attempts: 2, backoffMs: 200 }, 'rollup', asOf);
    await slow.waitForStdout('HOLDING ');
    const heldId = /HOLDING (\S+)/.exec(slow.stdout())![1]!;
    slow.child.kill('SIGTERM');
    const exit = await slow.exited;
    expect(exit.code).toBe(0);
    const held = (await queues.partitions.getJob(heldId))!;
    expect(await held.getState()).toBe('completed');
    expect(held.processedBy).toBe(`${os.hostname()}#${slow.pid}`);
    expect(slow.logs.find((l) => l.msg === 'worker stopped')?.['handedBack']).toEqual([]);

    // The rest of the run is left for others; a worker finishes it.
    const other = await readyWorker(env);
    expect((await waitForRun(queues, 'rollup', asOf, { timeoutMs: 60_000 })).state).toBe('completed');
    other.child.kill('SIGTERM');
    await other.exited;
  });

  it('SIGTERM during a job longer than the grace time: the job is handed back and the worker exits 0 within the grace time', async () => {
    const asOf = at(15);
    const graceMs = 3000;
    await forgetStates();
    const stuck = await readyWorker({ ...env, WORKER_SHUTDOWN_GRACE_SECONDS: String(graceMs / 1000) }, { fixture: 'worker-holding-partition.ts', args: ['hang'] });
    await enqueueRun(queues, { attempts: 2, backoffMs: 200 }, 'rollup', asOf);
    await stuck.waitForStdout('HOLDING ');
    const heldId = /HOLDING (\S+)/.exec(stuck.stdout())![1]!;
    const sent = Date.now();
    stuck.child.kill('SIGTERM');
    const exit = await stuck.exited;
    expect(exit.code).toBe(0);
    expect(exit.at - sent).toBeLessThan(graceMs + 1000);
    expect(stuck.logs.find((l) => l.msg === 'worker stopped')?.['handedBack']).toEqual([heldId]);

    // Back in the queue at once (not after a lock timeout), with no attempt used up.
    const held = (await queues.partitions.getJob(heldId))!;
    expect(['waiting', 'prioritized']).toContain(await held.getState());
    expect(held.attemptsMade).toBe(0);
    expect(held.stalledCounter).toBe(0);

    const other = await readyWorker(env);
    const run = await waitForRun(queues, 'rollup', asOf, { timeoutMs: 60_000 });
    expect(run.state, run.error ?? '').toBe('completed');
    expect((await queues.partitions.getJob(heldId))?.processedBy).toBe(`${os.hostname()}#${other.pid}`);
    expect(await manifestsOf(rollupRunId(asOf))).toHaveLength(1);
    other.child.kill('SIGTERM');
    await other.exited;
  });
});
