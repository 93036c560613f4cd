// A scheduler's tick: the run of its fire time, added once (a rollup tick through the gate, which
// coalesces ticks while a run is in flight: tick-gate.ts; none when idle: quiet-tick.ts), and the fire times that passed before
// it with no tick at all (no worker took the tick in time; BullMQ then skips to the next fire
// time), counted and said, so that they do not vanish without a trace.
import type { Job } from 'bullmq';
import { CronExpressionParser } from 'cron-parser';
import { z } from 'zod';
import type { Logger } from '../../lib/log.ts';
import type { Queues } from './client.ts';
import { addRunJob } from './enqueue.ts';
import { ticksCounter } from './metrics.ts';
import { QUEUES, SCHEDULERS, type RunKind } from './names.ts';
import { payloadOf, resultOf, TickPayload, type TickResult } from './payloads.ts';
import { scheduledAsOf, TickRepeat } from './fire-time.ts';
import { admitTick, gateKey, type Gate, type TickDecision } from './tick-gate.ts';
import { quietTick } from './quiet-tick.ts';

/** Fire times counted one by one at most (a cron over a long outage): beyond, the count stops there. */
const MAX_COUNTED = 100_000;

export interface Missed {
  count: number;
  /** The first and the last fire time missed, ISO 8601 UTC. */
  first: string;
  last: string;
}

export async function tick(gate: Gate, job: Job, log: Logger): Promise<TickResult> {
  payloadOf(TickPayload, job);
  const kind: RunKind = job.queueName === QUEUES.reports ? 'reports' : 'rollup';
  const asOf = scheduledAsOf(job);
  const missed = await missedBefore(gate.queues, kind, asOf, resultOf(TickRepeat, (job.opts as { repeat?: unknown }).repeat));
  if (missed) {
    ticksCounter.labels(kind, 'missed').inc(missed.count);
    log.warn({ schedule: kind, ...missed }, 'fire times missed: no worker took their tick in time');
  }
  const decision = await decide(gate, kind, asOf);
  ticksCounter.labels(kind, decision.outcome).inc();
  if (decision.behind) log.info({ asOf: asOf.toISOString(), behind: decision.behind.toISOString() }, 'tick coalesced: a run is in flight; the latest such tick starts when it ends');
  return { kind, asOf: asOf.toISOString(), jobId: decision.jobId, outcome: decision.outcome, behind: decision.behind?.toISOString() ?? null, missed };
}

/** A rollup tick through the gate (or idle: nothing new to roll up); a report tick's run at once. */
async function decide(gate: Gate, kind: RunKind, asOf: Date): Promise<TickDecision> {
  if (kind === 'reports') return { outcome: 'started', jobId: (await addRunJob(gate.queues, gate.retry, kind, asOf)).jobId, behind: null };
  if (gate.idle && (await quietTick(gate.idle, asOf))) return { outcome: 'idle', jobId: null, behind: null };
  return admitTick(gate, asOf);
}

/**
 * Record this tick as the last one seen (KEYS[1] the schedule's gate, ARGV[1] its fire time in
 * ms); returns the fire time of the tick seen before ('' for none), or ARGV[1] itself when it is
 * not later (a tick delivered again, or late).
 */
const NOTE_TICK = `
local last = redis.call('HGET', KEYS[1], 'last') or ''
if last ~= '' and tonumber(last) >= tonumber(ARGV[1]) then return ARGV[1] end
redis.call('HSET', KEYS[1], 'last', ARGV[1])
return last`;

/** The fire times of the schedule strictly between the tick seen before and this one. */
async function missedBefore(queues: Queues, kind: RunKind, asOf: Date, repeat: TickRepeat | null): Promise<Missed | null> {
  const previous = String(await queues.client.eval(NOTE_TICK, 1, gateKey(queues, SCHEDULERS[kind]), String(asOf.getTime())));
  if (previous === '' || Number(previous) >= asOf.getTime() || !repeat) return null;
  const between = fireTimesBetween(repeat, Number(previous), asOf.getTime());
  return between.count === 0 ? null : between.missed;
}

/** Forget the last tick seen (the schedule changed: its fire times before mean nothing now). */
export async function forgetTicks(queues: Queues, kind: RunKind): Promise<void> {
  await queues.client.hdel(gateKey(queues, SCHEDULERS[kind]), 'last');
}

function fireTimesBetween(repeat: TickRepeat, from: number, to: number): { count: number; missed: Missed } {
  const times: number[] = [];
  if (repeat.every) {
    for (let t = from + repeat.every; t < to && times.length < MAX_COUNTED; t += repeat.every) times.push(t);
  } else if (repeat.pattern) {
    const cron = CronExpressionParser.parse(repeat.pattern, { currentDate: new Date(from), tz: repeat.tz ?? 'UTC' });
    for (let t = cron.next().getTime(); t < to && times.length < MAX_COUNTED; t = cron.next().getTime()) times.push(t);
  }
  const iso = (ms: number | undefined) => new Date(ms ?? to).toISOString();
  return { count: times.length, missed: { count: times.length, first: iso(times[0]), last: iso(times.at(-1)) } };
}
