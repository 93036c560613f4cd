// The `schedule` command's work: install (or update) the job schedulers of the worker tier, or
// list them. Safe to run again: schedulers are upserted by id, never duplicated.
import { z } from 'zod';
import { runtime, withQueues } from '../runtime.ts';
import { cron } from '../../lib/settings/values.ts';
import type { ScheduleInfo } from '../../jobs/queue/schedules.ts';
import { table } from '../format.ts';

export const Flags = z.object({
  warehouse: z.string().optional(),
  redis: z.string().optional(),
  queuePrefix: z.string().optional(),
  rollupCron: cron.optional(),
  reportsCron: cron.optional(),
  list: z.boolean().optional(),
});

const WHAT: Record<string, string> = {
  rollup: 'rollup run: a snapshot as of the fire time',
  reports: 'report run (pilot reports of the current snapshot, pre-rendered)',
};

export async function run(flags: z.output<typeof Flags>): Promise<void> {
  const rt = runtime(flags);
  const schedules = { ...rt.config.schedules };
  if (flags.rollupCron !== undefined) schedules.rollup = flags.rollupCron;
  if (flags.reportsCron !== undefined) schedules.reports = flags.reportsCron;
  const { installSchedules, listSchedules } = await import('../../jobs/queue/schedules.ts');
  const installed = await withQueues(rt, (queues) =>
    flags.list ? listSchedules(queues) : installSchedules(queues, { schedules, jobs: rt.config.jobs }),
  );
  process.stdout.write(`${describeSchedules(installed, rt.config.redis.prefix)}\n`);
}

export function describeSchedules(list: ScheduleInfo[], prefix: string): string {
  if (list.length === 0) return `no schedules installed (queue prefix ${prefix})`;
  return table(
    ['schedule', 'pattern (UTC)', 'next run', 'what'],
    list.map((s) => [s.id, s.pattern, s.next ?? '-', WHAT[s.kind] ?? s.kind]),
  );
}
