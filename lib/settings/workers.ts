// Settings of the worker tier (BullMQ on Redis): the connection, the workers, retries and the
// schedules (entries of the settings table, lib/settings/table.ts).
import { z } from 'zod';
import { setting, type OtherSettings } from './define.ts';
import { MAX_TIMER_MS, nonNegativeNumber, cron, duration, flagSwitch, metricsListener, nonNegativeInt, port, positiveInt, queuePrefix, redisUrl, secondsToMs, timerMs, timerSeconds } from './values.ts';

const DEFAULT_ROLLUP_CRON = '*/5 * * * *';
/** The live default of `schedule`: a rollup every 2 s (docs/operations.md, "What the defaults cost"). */
const DEFAULT_ROLLUP_EVERY_MS = 2000;

/**
 * The rollup interval: ROLLUP_EVERY when given, else the live default, unless the cron is asked for
 * (ROLLUP_SCHEDULE, or ROLLUP_BATCH: the batch cadence): null then. An interval and a cron both
 * given is a mistake (which one was meant?).
 */
function rollupEvery(ms: number | undefined, others: OtherSettings): number | null {
  if (ms !== undefined && others.ROLLUP_SCHEDULE !== undefined) {
    throw new Error('--rollup-every (ROLLUP_EVERY) and --rollup-cron (ROLLUP_SCHEDULE) are exclusive: give one of them');
  }
  if (ms !== undefined && others.ROLLUP_BATCH === true) {
    throw new Error('--rollup-every (ROLLUP_EVERY) and --batch (ROLLUP_BATCH) are exclusive: --batch installs the cron');
  }
  if (ms !== undefined) return ms;
  return others.ROLLUP_SCHEDULE !== undefined || others.ROLLUP_BATCH === true ? null : DEFAULT_ROLLUP_EVERY_MS;
}

const REDIS = {
  REDIS_URL: setting({
    schema: redisUrl.default('redis://127.0.0.1:6379'),
    doc: 'Redis of the worker tier',
    at: 'redis.url',
    flags: { redis: { flag: '--redis <url>', help: 'Redis of the worker tier' } },
  }),
  QUEUE_PREFIX: setting({
    schema: queuePrefix.default('p2ptel'),
    doc: 'prefix of every queue key: deployments sharing one Redis use different prefixes',
    at: 'redis.prefix',
    flags: { redis: { flag: '--queue-prefix <prefix>', help: 'prefix of every queue key, one per deployment sharing a Redis' } },
  }),
  REDIS_CONNECT_TIMEOUT_MS: setting({
    schema: timerMs().default(5000),
    doc: 'how long a command tries to reach Redis before its one-line error',
    at: 'redis.connectTimeoutMs',
  }),
};

const WORKER = {
  WORKER_CONCURRENCY: setting({
    schema: positiveInt.default(1),
    doc: 'customer partitions one worker process computes at once',
    at: 'worker.concurrency',
    flags: { worker: { flag: '--concurrency <n>', help: 'customer partitions this process computes at once' } },
  }),
  WORKER_SHUTDOWN_GRACE_SECONDS: setting({
    schema: timerSeconds.default(30),
    doc: 'after SIGTERM, time to finish running jobs before handing them back and exiting',
    at: 'worker.shutdownGraceMs',
    as: secondsToMs,
    flags: { worker: { flag: '--grace-seconds <s>', help: 'after SIGTERM, time to finish running jobs before handing them back and exiting' } },
  }),
  WORKER_LOCK_DURATION_MS: setting({
    schema: timerMs(1000).default(30_000),
    doc: "a job's lock lasts this long unless renewed; a dead worker's jobs are retaken once it expires",
    at: 'worker.lockDurationMs',
  }),
  WORKER_STALLED_INTERVAL_MS: setting({
    schema: timerMs(500).default(30_000),
    doc: 'how often workers look for jobs of dead workers (stalled jobs)',
    at: 'worker.stalledIntervalMs',
  }),
  WORKER_MAX_STALLED_COUNT: setting({ schema: nonNegativeInt.default(1), doc: 'stalls a job survives before it fails', at: 'worker.maxStalledCount' }),
  WORKER_METRICS_PORT: setting({
    schema: port.optional(),
    doc: "a worker's `GET /metrics` listener, on `METRICS_HOST`",
    at: 'worker.metrics',
    as: metricsListener,
    flags: { worker: { flag: '--metrics-port <port>', help: 'serve GET /metrics (Prometheus) on this port, on METRICS_HOST (default 127.0.0.1)' } },
  }),
};

const JOBS = {
  JOB_ATTEMPTS: setting({ schema: positiveInt.default(3), doc: 'attempts of every job', at: 'jobs.attempts' }),
  JOB_BACKOFF_MS: setting({ schema: nonNegativeInt.default(10_000), doc: 'first retry delay, doubled at each attempt', at: 'jobs.backoffMs' }),
  ROLLUP_SCHEDULE: setting({
    schema: cron.optional(),
    shown: `\`${DEFAULT_ROLLUP_CRON}\``,
    doc: 'cron (UTC) of scheduled rollup runs, installed by `schedule`',
    at: 'schedules.rollup',
    as: (pattern) => pattern ?? DEFAULT_ROLLUP_CRON,
    flags: { schedule: { flag: '--rollup-cron <pattern>', help: 'when rollup runs start ({env}, default "{default}": every 5 minutes)' } },
  }),
  ROLLUP_EVERY: setting({
    schema: duration.optional(),
    shown: '`2s` (none with `ROLLUP_SCHEDULE` or `ROLLUP_BATCH`: the cron)',
    doc: 'interval of scheduled rollup runs (`2s`, `30s`, `2m`), installed by `schedule`: live figures by default (docs/operations.md)',
    at: 'schedules.rollupEveryMs',
    as: rollupEvery,
    flags: { schedule: { flag: '--rollup-every <duration>', help: 'start rollup runs at this interval, e.g. 5s ({env}, default 2s unless --rollup-cron or --batch)' } },
  }),
  ROLLUP_BATCH: setting({
    schema: flagSwitch.optional(),
    shown: 'off',
    doc: '`1`: `schedule` installs the batch cadence, the rollup cron (`ROLLUP_SCHEDULE`), instead of the live interval: fewer, larger runs (docs/operations.md)',
    at: 'schedules.batch',
    as: (on) => on === true,
    flags: { schedule: { flag: '--batch', help: 'install the batch cadence: rollups on the cron (--rollup-cron, default every 5 minutes) instead of every 2 s ({env})' } },
  }),
  ROLLUP_IDLE_SECONDS: setting({
    schema: nonNegativeNumber.max(MAX_TIMER_MS / 1000, "at most 2147483 (about 24.8 days: a Node timer's longest wait)").default(30),
    doc: '0: every tick runs. Else, with nothing landed since the snapshot CURRENT names, a live rollup tick (or `start`\'s loop) runs only once that snapshot is this old: windows move with the clock, and an idle deployment publishes one snapshot per this time',
    at: 'schedules.idleRefreshMs',
    as: secondsToMs,
  }),
  COMPACT_EVERY: setting({
    schema: duration.default(60_000),
    shown: '`60s`',
    doc: 'interval of the compaction job (merges small landed files and the layers of recent states that are due; docs/warehouse-state.md), installed by `schedule`',
    at: 'schedules.compactEveryMs',
    flags: { schedule: { flag: '--compact-every <duration>', help: 'run the compaction job at this interval, e.g. 60s ({env}, default {default})' } },
  }),
  REPORTS_SCHEDULE: setting({
    schema: cron.default('0 2 * * *'),
    doc: 'cron (UTC) of scheduled report runs, installed by `schedule`',
    at: 'schedules.reports',
    flags: { schedule: { flag: '--reports-cron <pattern>', help: 'when report runs start ({env}, default "{default}": 02:00 UTC)' } },
  }),
};

export const WORKERS = { ...REDIS, ...WORKER, ...JOBS };
