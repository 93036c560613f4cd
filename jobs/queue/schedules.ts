// The job schedulers: a rollup run every few minutes and the nightly report run, both on cron
// patterns read in UTC. Upserted by id, so installing them twice (or from two machines) leaves
// one of each; installing with another pattern changes it in place.
import type { AppConfig } from '../../lib/config.ts';
import type { Queues } from './client.ts';
import { runJobOptions } from './job-options.ts';
import { JOBS, SCHEDULERS, type RunKind } from './names.ts';

export interface ScheduleInfo {
  id: string;
  kind: RunKind;
  pattern: string;
  tz: string;
  /** Next fire time, ISO 8601 UTC (the asOf of the run it starts). */
  next: string | null;
}

export async function installSchedules(queues: Queues, config: Pick<AppConfig, 'schedules' | 'jobs'>): Promise<ScheduleInfo[]> {
  // A scheduler adds a "tick" job; the tick adds the run under an id derived from its fire time.
  const template = { name: JOBS.tick, data: {}, opts: runJobOptions(config.jobs) };
  await queues.rollup.upsertJobScheduler(SCHEDULERS.rollup, { pattern: config.schedules.rollup, tz: 'UTC' }, template);
  await queues.reports.upsertJobScheduler(SCHEDULERS.reports, { pattern: config.schedules.reports, tz: 'UTC' }, template);
  return listSchedules(queues);
}

export async function listSchedules(queues: Queues): Promise<ScheduleInfo[]> {
  const out: ScheduleInfo[] = [];
  for (const [kind, queue] of [['rollup', queues.rollup], ['reports', queues.reports]] as const) {
    for (const s of await queue.getJobSchedulers()) {
      out.push({
        id: s.key,
        kind,
        pattern: s.pattern ?? (s.every ? `every ${s.every} ms` : '?'),
        tz: s.tz ?? 'local',
        next: typeof s.next === 'number' ? new Date(s.next).toISOString() : null,
      });
    }
  }
  return out;
}
