// `schedule`: installs (or updates) the job schedulers of the worker tier. Safe to run again:
// schedulers are upserted by id, never duplicated.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withRedis, withWarehouse } from '../options.ts';

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
  ).action(commandAction(() => import('../actions/schedule.ts')));
}
