// Workers keep the schedules installed: when Redis lost its data (restarted empty, flushed), the
// job schedulers are gone and no run would start until an operator ran `schedule` again. Each
// worker looks for them when its connection to Redis becomes ready (at start, after a reconnect)
// and every few seconds, and installs what `schedule` last wrote with the warehouse
// (control/schedule.json) when one is missing: said in its log and counted in /metrics.
import type { Logger } from '../../lib/log.ts';
import type { WarehouseLayout } from '../../warehouse/layout.ts';
import { readDesiredSchedule } from '../../control/schedule.ts';
import type { AppConfig } from '../../lib/config.ts';
import type { Queues } from './client.ts';
import { schedulesReinstalledCounter } from './metrics.ts';
import { SCHEDULERS } from './names.ts';
import { installSchedules } from './schedules.ts';

/** Between two looks for missing schedulers (besides one at each reconnect): 3 Redis reads each. */
export const SCHEDULE_CHECK_MS = 5_000;

export interface ScheduleKeeperDeps {
  queues: Queues;
  layout: WarehouseLayout;
  jobs: AppConfig['jobs'];
  log: Logger;
}

/** The job schedulers missing from Redis, by id. */
export async function missingSchedulers(queues: Queues): Promise<string[]> {
  const found = await Promise.all([
    queues.rollup.getJobScheduler(SCHEDULERS.rollup),
    queues.reports.getJobScheduler(SCHEDULERS.reports),
    queues.compaction.getJobScheduler(SCHEDULERS.compaction),
  ]);
  return [SCHEDULERS.rollup, SCHEDULERS.reports, SCHEDULERS.compaction].filter((_, i) => !found[i]);
}

/**
 * Install the desired schedules again when one is missing. Returns the schedulers it reinstalled
 * (none when all are there, or when `schedule` never ran against this warehouse and prefix).
 */
export async function reinstallMissing(deps: ScheduleKeeperDeps): Promise<string[]> {
  const missing = await missingSchedulers(deps.queues);
  if (missing.length === 0) return [];
  const desired = await readDesiredSchedule(deps.layout, deps.queues.prefix);
  if (!desired) return [];
  await installSchedules(deps.queues, { schedules: desired, jobs: deps.jobs });
  schedulesReinstalledCounter.inc();
  deps.log.warn(
    { missing, rollup: desired.rollupEveryMs === null ? desired.rollup : `every ${desired.rollupEveryMs} ms`, since: desired.writtenAt },
    'schedules missing in Redis (did it lose its data?): reinstalled from the warehouse (control/schedule.json)',
  );
  return missing;
}

/** Look at each reconnect and every SCHEDULE_CHECK_MS, one look at a time; stop() ends it. */
export function keepSchedules(deps: ScheduleKeeperDeps, periodMs = SCHEDULE_CHECK_MS): { stop(): void } {
  let running: Promise<void> | null = null;
  let stopped = false;
  const look = () => {
    if (stopped || running) return;
    running = reinstallMissing(deps)
      .then(() => undefined)
      .catch((err: unknown) => deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not check the schedules in Redis; trying again shortly'))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(look, periodMs);
  timer.unref();
  deps.queues.client.on('ready', look);
  look();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      deps.queues.client.off('ready', look);
    },
  };
}
