// The rollup schedule's gate (jobs/queue/tick-gate.ts) against a real Redis, no worker running: a
// tick coalesces behind a run whose gate was just set although its first job is not in Redis yet
// (the moment between the two, seconds long on a loaded machine, when a second tick used to start
// a run beside it), and starts its own run once that run's starter is long gone, or behind a run
// that finished; the run of coalesced ticks is as of the moment it starts, never before their
// fire time.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { jobConfig, jobEnv, testQueues, uniquePrefix } from '../helpers/jobs.ts';
import { admitTick, gateKey, startCoalesced, type Gate } from '../../jobs/queue/tick-gate.ts';
import { SCHEDULERS } from '../../jobs/queue/names.ts';
import { describeRun } from '../../jobs/queue/runs.ts';
import type { Queues } from '../../jobs/queue/client.ts';

let queues: Queues;
let gate: Gate;

beforeAll(async () => {
  const env = jobEnv('/nonexistent-warehouse', uniquePrefix('gate'));
  queues = await testQueues(env);
  gate = { queues, retry: jobConfig(env).jobs, workerName: 'test#0' };
});

afterAll(async () => {
  await queues?.close();
});

const at = (s: number) => new Date(Date.UTC(2026, 10, 27, 1, 0, s));

it('coalesces behind a run whose first job is not added yet, and starts once its starter is taken for dead', async () => {
  const key = gateKey(queues, SCHEDULERS.rollup);
  // A tick set the gate to its fire time a moment ago and has not added the run's job yet.
  await queues.client.hset(key, 'started', String(at(0).getTime()), 'startedAt', String(Date.now()));
  expect(await describeRun(queues, 'rollup', at(0))).toBeNull();
  const next = await admitTick(gate, at(1));
  expect(next).toEqual({ outcome: 'coalesced', jobId: null, behind: at(0) });
  expect(await describeRun(queues, 'rollup', at(1))).toBeNull();
  expect(await queues.client.hget(key, 'pending')).toBe(String(at(1).getTime()));

  // The same gate set a minute ago and still no job: its starter died; the next tick starts.
  await queues.client.hset(key, 'startedAt', String(Date.now() - 60_000));
  const later = await admitTick(gate, at(2));
  expect(later.outcome).toBe('started');
  expect(await queues.client.hget(key, 'started')).toBe(String(at(2).getTime()));
  expect(Number(await queues.client.hget(key, 'startedAt'))).toBeGreaterThan(Date.now() - 10_000);
  expect((await describeRun(queues, 'rollup', at(2)))?.state).toBe('queued');

  // That run is queued (no worker takes it): in flight, so the tick after it coalesces.
  expect((await admitTick(gate, at(3))).outcome).toBe('coalesced');
});

it('starts the run of the ticks coalesced behind a finished run as of now, not as of their fire time', async () => {
  const key = gateKey(queues, SCHEDULERS.rollup);
  await queues.client.del(key);
  // Nothing coalesced: nothing to start.
  expect(await startCoalesced(gate, () => at(30).getTime())).toBeNull();

  // The run of at(10) is long gone (set a minute ago, no job), and the tick of at(12) coalesced behind it.
  await queues.client.hset(key, 'started', String(at(10).getTime()), 'startedAt', String(Date.now() - 60_000), 'pending', String(at(12).getTime()));
  // It starts at at(13.5): as of then, so that the reports of (at(12), at(13.5)] are not held back for one more run.
  const now = at(13).getTime() + 500;
  expect(await startCoalesced(gate, () => now)).toEqual({ fireTime: at(12), asOf: new Date(now) });
  expect(await queues.client.hget(key, 'started')).toBe(String(now));
  expect(await queues.client.hget(key, 'pending')).toBeNull();
  expect((await describeRun(queues, 'rollup', new Date(now)))?.state).toBe('queued');
  expect(await describeRun(queues, 'rollup', at(12))).toBeNull();
  // A tick of a fire time before it is covered by that run; one after it coalesces behind it.
  expect(await admitTick(gate, at(13))).toEqual({ outcome: 'coalesced', jobId: null, behind: new Date(now) });
  expect(await queues.client.hget(key, 'pending')).toBeNull();
  expect(await admitTick(gate, at(14))).toEqual({ outcome: 'coalesced', jobId: null, behind: new Date(now) });
  expect(await queues.client.hget(key, 'pending')).toBe(String(at(14).getTime()));

  // A fire time still ahead of the clock (a tick taken early): the run is as of that fire time.
  await queues.client.hset(key, 'started', String(at(20).getTime()), 'startedAt', String(Date.now() - 60_000), 'pending', String(at(22).getTime()));
  expect(await startCoalesced(gate, () => at(21).getTime())).toEqual({ fireTime: at(22), asOf: at(22) });
});
