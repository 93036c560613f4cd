// `schedule`: installs (or updates) the job schedulers of the worker tier. Safe to run again:
// schedulers are upserted by id, never duplicated.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerSchedule(program: Command): void {
  const schedule = withSettings(
    program
      .command('schedule')
      .description('install or update the schedules (BullMQ job schedulers: cron in UTC, or rollups at an interval with --rollup-every); running it again never duplicates them'),
    'schedule',
  ).option('--list', 'only list the installed schedules');
  withSettings(schedule, 'warehouse', 'redis').action(commandAction(() => import('../actions/schedule.ts')));
}
