// `schedule`: installs (or updates) the job schedulers of the worker tier. Safe to run again:
// schedulers are upserted by id, never duplicated.
import type { Command } from 'commander';
import { action, parseOption, runtime, withQueues } from '../runtime.ts';
import { withRedis, withWarehouse } from '../options.ts';
import { cronSchema } from '../../lib/config.ts';
import type { ScheduleInfo } from '../../jobs/queue/schedules.ts';
import { table } from '../format.ts';

interface ScheduleFlags {
  warehouse?: string;
  redis?: string;
  queuePrefix?: string;
  rollupCron?: string;
  reportsCron?: string;
  list?: boolean;
}

const WHAT: Record<string, string> = {
  rollup: 'rollup run: a snapshot as of the fire time',
  reports: 'report run (pilot reports of the current snapshot, pre-rendered)',
};

export function registerSchedule(program: Command): void {
  withRedis(
    withWarehouse(
      program
        .command('schedule')
        .description('install or update the schedules (BullMQ job schedulers, cron in UTC); running it again never duplicates them')
        .option('--rollup-cron <pattern>', 'when rollup runs start (env ROLLUP_SCHEDULE, default "*/5 * * * *": every 5 minutes)')
        .option('--reports-cron <pattern>', 'when report runs start (env REPORTS_SCHEDULE, default "0 2 * * *": 02:00 UTC)')
        .option('--list', 'only list the installed schedules'),
    ),
  ).action(
    action(async (flags: ScheduleFlags) => {
      const rt = runtime(flags);
      const schedules = { ...rt.config.schedules };
      if (flags.rollupCron !== undefined) schedules.rollup = parseOption('rollup-cron', cronSchema, flags.rollupCron);
      if (flags.reportsCron !== undefined) schedules.reports = parseOption('reports-cron', cronSchema, flags.reportsCron);
      const { installSchedules, listSchedules } = await import('../../jobs/queue/schedules.ts');
      const installed = await withQueues(rt, (queues) =>
        flags.list ? listSchedules(queues) : installSchedules(queues, { schedules, jobs: rt.config.jobs }),
      );
      process.stdout.write(`${describeSchedules(installed, rt.config.redis.prefix)}\n`);
    }),
  );
}

export function describeSchedules(list: ScheduleInfo[], prefix: string): string {
  if (list.length === 0) return `no schedules installed (queue prefix ${prefix})`;
  return table(
    ['schedule', 'pattern (UTC)', 'next run', 'what'],
    list.map((s) => [s.id, s.pattern, s.next ?? '-', WHAT[s.kind] ?? s.kind]),
  );
}
