// `enqueue --wait` and a Redis that lost its data (restarted without persistence): a run whose
// jobs were there and are gone is reported as vanished (exit 1 in the CLI), not waited for forever.
// The loss is reproduced by removing the run's jobs from a real Redis, as an empty restart would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { jobConfig, jobEnv, testQueues, uniquePrefix } from '../helpers/jobs.ts';
import type { Queues } from '../../jobs/queue/client.ts';
import { enqueueRun, RunVanishedError, waitForRun } from '../../jobs/queue/enqueue.ts';

let wh: TestWarehouse;
let queues: Queues;
let env: Record<string, string>;

beforeAll(async () => {
  wh = await openTestWarehouse();
  env = jobEnv(wh.root, uniquePrefix('vanish'));
  queues = await testQueues(env);
}, 60_000);
afterAll(async () => {
  await queues?.close();
  await wh?.close();
});

describe('waiting for a run that Redis lost', () => {
  it('says the run is gone instead of waiting forever', async () => {
    const asOf = new Date('2026-11-20T03:00:00Z');
    // No worker: the run stays queued.
    const outcome = await enqueueRun(queues, jobConfig(env).jobs, 'reports', asOf);
    expect(outcome.status).toBe('added');
    const waiting = waitForRun(queues, 'reports', asOf, { pollMs: 50 }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 300));
    await queues.reports.obliterate({ force: true });
    const err = await waiting;
    expect(err).toBeInstanceOf(RunVanishedError);
    expect((err as Error).message).toMatch(/is no longer in Redis \(restarted without persistence\?\).*enqueue it again/);
  });
});
