// The job schedulers: rollup runs at a fixed interval (`every`: every 2 s by default, live figures)
// or on a cron pattern read in UTC (the batch cadence: every 5 minutes by default), the nightly
// report run, and the compaction job of small landed files at an interval (every 60 s by
// default). Upserted by id, so
// installing them twice (or from two machines) leaves one of each; installing with another
// pattern or interval changes it in place.
import type { JobsOptions, RepeatOptions } from 'bullmq';
import type { AppConfig } from '../../lib/config.ts';
import type { Queues } from './client.ts';
import { compactionJobOptions, runJobOptions } from './job-options.ts';
import { JOBS, SCHEDULERS, type RunKind } from './names.ts';
import { forgetTicks } from './ticks.ts';

export interface ScheduleInfo {
  id: string;
  kind: RunKind | 'compaction';
  /** The cron pattern, or `every 5s` for an interval. */
  pattern: string;
  /** The interval in ms of an `every` scheduler; null for a cron. */
  every: number | null;
  tz: string;
  /** Next fire time, ISO 8601 UTC (the asOf of the run it starts). */
  next: string | null;
}

/** What is installed: the schedules' part of the config, or the desired state kept with the warehouse. */
export interface ScheduleConfig {
  schedules: Pick<AppConfig['schedules'], 'rollup' | 'rollupEveryMs' | 'reports' | 'compactEveryMs'>;
  jobs: AppConfig['jobs'];
}

export async function installSchedules(queues: Queues, config: ScheduleConfig): Promise<ScheduleInfo[]> {
  // A scheduler adds a "tick" job; the tick adds the run under an id derived from its fire time.
  const template = { name: JOBS.tick, data: {}, opts: runJobOptions(config.jobs) };
  await upsert(queues, 'rollup', rollupRepeat(config.schedules), template);
  await upsert(queues, 'reports', { pattern: config.schedules.reports, tz: 'UTC' }, template);
  // The compaction job needs no run of its own: its scheduler adds the job itself.
  const every = config.schedules.compactEveryMs;
  await queues.compaction.upsertJobScheduler(SCHEDULERS.compaction, { every, startDate: Math.ceil(Date.now() / every) * every }, {
    name: JOBS.compact,
    data: {},
    opts: compactionJobOptions(),
  });
  return listSchedules(queues);
}

async function upsert(queues: Queues, kind: RunKind, repeat: RepeatOptions, template: { name: string; data: object; opts: JobsOptions }): Promise<void> {
  const queue = kind === 'rollup' ? queues.rollup : queues.reports;
  const before = await queue.getJobScheduler(SCHEDULERS[kind]);
  // Fire times of another schedule are not missed ones of this one.
  if ((before?.pattern ?? null) !== (repeat.pattern ?? null) || (before?.every ?? null) !== (repeat.every ?? null)) await forgetTicks(queues, kind);
  await queue.upsertJobScheduler(SCHEDULERS[kind], repeat, template);
}

/**
 * The rollup scheduler's repeat options. An interval starts at the next multiple of itself since
 * the epoch, so that fire times (the runs' asOf) are round, as a cron's are: every 5s fires at
 * :00, :05, :10…
 */
export function rollupRepeat(schedules: ScheduleConfig['schedules'], now = Date.now()): RepeatOptions {
  const every = schedules.rollupEveryMs;
  if (every === null) return { pattern: schedules.rollup, tz: 'UTC' };
  return { every, startDate: Math.ceil(now / every) * every };
}

export async function listSchedules(queues: Queues): Promise<ScheduleInfo[]> {
  const out: ScheduleInfo[] = [];
  for (const [kind, queue] of [['rollup', queues.rollup], ['reports', queues.reports], ['compaction', queues.compaction]] as const) {
    for (const s of await queue.getJobSchedulers()) {
      out.push({
        id: s.key,
        kind,
        pattern: s.pattern ?? (s.every ? `every ${formatInterval(s.every)}` : '?'),
        every: s.pattern ? null : (s.every ?? null),
        tz: s.tz ?? (s.every ? 'UTC' : 'local'),
        next: typeof s.next === 'number' ? new Date(s.next).toISOString() : null,
      });
    }
  }
  return out;
}

/** 5000 → 5s, 120000 → 2m, 1500 → 1500ms: as `--rollup-every` takes it. */
export function formatInterval(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
