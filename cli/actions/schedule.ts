// The `schedule` command's work: install (or update) the job schedulers of the worker tier, or
// list them. Safe to run again: schedulers are upserted by id, never duplicated. What it installs
// is first written with the warehouse (control/schedule.json), from which workers reinstall it
// when Redis lost it.
import { z } from 'zod';
import { runtime, withQueues } from '../runtime.ts';
import type { AppConfig, SettingOverrides } from '../../lib/config.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { writeDesiredSchedule } from '../../control/schedule.ts';
import type { ScheduleInfo } from '../../jobs/queue/schedules.ts';
import type { Queues } from '../../jobs/queue/client.ts';
import { table } from '../format.ts';

/** --rollup-cron, --rollup-every, --batch, --reports-cron and --compact-every are settings' flags (ROLLUP_SCHEDULE, ROLLUP_EVERY, ROLLUP_BATCH, REPORTS_SCHEDULE, COMPACT_EVERY). */
export const Flags = z.object({ list: z.boolean().optional() });

const WHAT: Record<string, string> = {
  rollup: 'rollup run: a snapshot as of the fire time',
  reports: 'report run (pilot reports of the current snapshot, pre-rendered)',
  compaction: 'compaction of small landed files (skipped while another one runs)',
};

export async function run(flags: z.output<typeof Flags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const { listSchedules } = await import('../../jobs/queue/schedules.ts');
  const installed = await withQueues(rt, async (queues) => (flags.list ? listSchedules(queues) : recordAndInstall(queues, rt.config)));
  process.stdout.write(`${describeSchedules(installed, rt.config.redis.prefix)}\n`);
}

/** The schedules of `config` written with the warehouse, then installed (Redis reachable: `queues` is open). */
export async function recordAndInstall(queues: Queues, config: AppConfig): Promise<ScheduleInfo[]> {
  const { installSchedules } = await import('../../jobs/queue/schedules.ts');
  await recordDesired(config);
  return installSchedules(queues, config);
}

/** The schedules about to be installed, written with the warehouse (after Redis was found reachable). */
async function recordDesired(config: AppConfig): Promise<void> {
  const { rollup, rollupEveryMs, reports, compactEveryMs } = config.schedules;
  await writeDesiredSchedule(warehouseLayout(config.warehouseDir), { prefix: config.redis.prefix, rollup, rollupEveryMs, reports, compactEveryMs });
}

export function describeSchedules(list: ScheduleInfo[], prefix: string): string {
  if (list.length === 0) return `no schedules installed (queue prefix ${prefix})`;
  return table(
    ['schedule', 'pattern (UTC)', 'next run', 'what'],
    list.map((s) => [s.id, s.pattern, s.next ?? '-', WHAT[s.kind] ?? s.kind]),
  );
}
