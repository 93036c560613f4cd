// The one place that reads the environment: validates it once and hands out a typed config.
// Command-line flags override environment values; nothing else in the project reads process.env.
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_PLATFORM_CONFIG_FILE } from '../config/platform.ts';
import { CronExpressionParser } from 'cron-parser';

const positiveInt = z.coerce.number().int().positive();

/** A redis:// or rediss:// URL (BullMQ's connection). */
export const redisUrlSchema = z
  .string()
  .refine((s) => URL.canParse(s) && /^rediss?:$/.test(new URL(s).protocol), 'a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379');

/** Namespaces every queue key, so that several deployments can share one Redis. */
export const queuePrefixSchema = z.string().regex(/^[A-Za-z0-9_.{}-]{1,64}$/, '1–64 characters of [A-Za-z0-9_.{}-]');

/** A cron pattern (minute hour day month weekday, optionally seconds first), read in UTC. */
export const cronSchema = z.string().refine((s) => {
  const fields = s.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6) return false;
  try {
    CronExpressionParser.parse(s, { tz: 'UTC' });
    return true;
  } catch {
    return false;
  }
}, 'a cron pattern of five fields (minute hour day month weekday), e.g. "*/5 * * * *"');

const EnvSchema = z.object({
  WAREHOUSE_DIR: z.string().min(1).default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
  DUCKDB_THREADS: positiveInt.optional(),
  DUCKDB_MEMORY_LIMIT: z
    .string()
    .regex(/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, 'a size such as 4GB or 512MiB')
    .optional(),
  DUCKDB_MAX_CONCURRENT: positiveInt.default(2),
  SNAPSHOT_KEEP: positiveInt.default(5),
  SNAPSHOT_DEBRIS_GRACE_SECONDS: z.coerce.number().int().nonnegative().default(3600),
  PUBLISH_LOCK_STALE_SECONDS: z.coerce.number().int().min(2).default(10),
  ACTIVITY_HORIZON_SECONDS: positiveInt.default(120),
  ROLLUP_PARTITION_CONCURRENCY: positiveInt.default(1),
  PLATFORM_CONFIG: z.string().min(1).optional(),
  TOKEN_SECRET: z.string().min(1).optional(),
  MANIFEST_SIGNING_KEY: z.string().min(1).optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  // GET /metrics without a token, on a listener of its own (unset: only operators, on PORT).
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  API_QUERY_TIMEOUT_SECONDS: z.coerce.number().positive().default(15),
  API_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().default(30),
  SNAPSHOT_POLL_SECONDS: z.coerce.number().positive().default(2),
  // The worker tier (BullMQ on Redis).
  REDIS_URL: redisUrlSchema.default('redis://127.0.0.1:6379'),
  QUEUE_PREFIX: queuePrefixSchema.default('p2ptel'),
  REDIS_CONNECT_TIMEOUT_MS: positiveInt.default(5000),
  WORKER_CONCURRENCY: positiveInt.default(1),
  WORKER_SHUTDOWN_GRACE_SECONDS: z.coerce.number().positive().default(30),
  WORKER_LOCK_DURATION_MS: z.coerce.number().int().min(1000).default(30_000),
  WORKER_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).default(30_000),
  WORKER_MAX_STALLED_COUNT: z.coerce.number().int().nonnegative().default(1),
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  JOB_ATTEMPTS: positiveInt.default(3),
  JOB_BACKOFF_MS: z.coerce.number().int().nonnegative().default(10_000),
  ROLLUP_SCHEDULE: cronSchema.default('*/5 * * * *'),
  REPORTS_SCHEDULE: cronSchema.default('0 2 * * *'),
});

export interface DuckDbConfig {
  /** DuckDB worker threads per process. */
  threads: number;
  /** DuckDB memory limit, e.g. "4GB". */
  memoryLimit: string;
  /** Cap on DuckDB calls running at once in one process (they use libuv's pool). */
  maxConcurrent: number;
}

export interface AppConfig {
  warehouseDir: string;
  logLevel: LogLevel;
  duckdb: DuckDbConfig;
  snapshots: {
    /** Published snapshots kept, the current one included. */
    keep: number;
    /** Unpublished build folders older than this are debris, whoever made them. */
    debrisGraceMs: number;
    /** The publish lock of a publisher that stopped refreshing it for this long is taken over. */
    lockStaleMs: number;
  };
  /** A session is active when its latest report is at most this old at asOf. */
  activityHorizonSeconds: number;
  /** Customer partitions a single inline run computes at once. */
  partitionConcurrency: number;
  /** The platform configuration document (config/platform.json unless PLATFORM_CONFIG says). */
  platformConfigFile: string;
  /** Signing secret of API tokens, when given by the environment (else kept in the control area). */
  tokenSecret: string | null;
  /** The manifest signing key (PEM or JWK), when given by the environment (else kept in the control area). */
  manifestSigningKey: string | null;
  /** Interface of the metrics listeners (API METRICS_PORT, worker --metrics-port). */
  metricsHost: string;
  api: {
    port: number;
    host: string;
    /** Work that touches DuckDB on a request (on-demand series) is cancelled after this. */
    queryTimeoutMs: number;
    /** Time a client has to send its whole request (Node's requestTimeout: 408 and the connection closed after it). */
    requestTimeoutMs: number;
    /** How often the server checks CURRENT besides watching it. */
    snapshotPollMs: number;
    /** A listener serving only GET /metrics, without a token; null: none (operators use /metrics on the API port). */
    metrics: { port: number; host: string } | null;
  };
  redis: RedisConfig;
  worker: WorkerConfig;
  /** Retries of every job: attempts in all, exponential backoff from `backoffMs`. */
  jobs: { attempts: number; backoffMs: number };
  /** Cron patterns (UTC) of the job schedulers installed by `cli schedule`. */
  schedules: { rollup: string; reports: string };
}

export interface RedisConfig {
  url: string;
  /** Prefix of every queue key: deployments sharing one Redis use different prefixes. */
  prefix: string;
  /** How long a command waits for Redis before it gives up with a one-line error. */
  connectTimeoutMs: number;
}

export interface WorkerConfig {
  /** Customer partition jobs one worker process runs at once. */
  concurrency: number;
  /** After SIGTERM: time to finish current jobs before handing them back and exiting. */
  shutdownGraceMs: number;
  /** A job's lock lasts this long unless renewed; a dead worker's jobs are retaken after it. */
  lockDurationMs: number;
  /** How often workers look for jobs whose worker died (stalled jobs). */
  stalledIntervalMs: number;
  /** Stalls a job survives before it fails. */
  maxStalledCount: number;
  /** GET /metrics of this worker on its own listener (on METRICS_HOST); null: none. */
  metrics: { port: number; host: string } | null;
}

export type LogLevel = NonNullable<z.infer<typeof EnvSchema>['LOG_LEVEL']>;

export interface ConfigOverrides {
  warehouseDir?: string | undefined;
  port?: number | undefined;
  host?: string | undefined;
  /** The API's or worker's metrics listener port (flag over env). */
  metricsPort?: number | undefined;
  redisUrl?: string | undefined;
  queuePrefix?: string | undefined;
  /** Log level when LOG_LEVEL is not set: short commands only say what went wrong. */
  defaultLogLevel?: LogLevel;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function defaultMemoryLimit(): string {
  // Half the machine, capped: DuckDB's own default (80 %) is too greedy for a shared host.
  const gib = Math.max(1, Math.min(8, Math.floor(os.totalmem() / 2 ** 30 / 2)));
  return `${gib}GiB`;
}

export function loadConfig(overrides: ConfigOverrides = {}, env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid environment: ${issues}`);
  }
  const e = parsed.data;
  return {
    warehouseDir: path.resolve(overrides.warehouseDir ?? e.WAREHOUSE_DIR),
    logLevel: e.LOG_LEVEL ?? overrides.defaultLogLevel ?? 'info',
    duckdb: {
      threads: e.DUCKDB_THREADS ?? Math.max(1, os.availableParallelism()),
      memoryLimit: e.DUCKDB_MEMORY_LIMIT ?? defaultMemoryLimit(),
      maxConcurrent: e.DUCKDB_MAX_CONCURRENT,
    },
    snapshots: {
      keep: e.SNAPSHOT_KEEP,
      debrisGraceMs: e.SNAPSHOT_DEBRIS_GRACE_SECONDS * 1000,
      lockStaleMs: e.PUBLISH_LOCK_STALE_SECONDS * 1000,
    },
    activityHorizonSeconds: e.ACTIVITY_HORIZON_SECONDS,
    partitionConcurrency: e.ROLLUP_PARTITION_CONCURRENCY,
    platformConfigFile: e.PLATFORM_CONFIG ? path.resolve(e.PLATFORM_CONFIG) : DEFAULT_PLATFORM_CONFIG_FILE,
    tokenSecret: e.TOKEN_SECRET ?? null,
    manifestSigningKey: e.MANIFEST_SIGNING_KEY ?? null,
    metricsHost: e.METRICS_HOST,
    api: {
      port: overrides.port ?? e.PORT,
      host: overrides.host ?? e.HOST,
      queryTimeoutMs: e.API_QUERY_TIMEOUT_SECONDS * 1000,
      requestTimeoutMs: e.API_REQUEST_TIMEOUT_SECONDS * 1000,
      snapshotPollMs: e.SNAPSHOT_POLL_SECONDS * 1000,
      metrics: (overrides.metricsPort ?? e.METRICS_PORT) === undefined ? null : { port: (overrides.metricsPort ?? e.METRICS_PORT)!, host: e.METRICS_HOST },
    },
    redis: {
      url: overrides.redisUrl ?? e.REDIS_URL,
      prefix: overrides.queuePrefix ?? e.QUEUE_PREFIX,
      connectTimeoutMs: e.REDIS_CONNECT_TIMEOUT_MS,
    },
    worker: {
      concurrency: e.WORKER_CONCURRENCY,
      shutdownGraceMs: Math.round(e.WORKER_SHUTDOWN_GRACE_SECONDS * 1000),
      lockDurationMs: e.WORKER_LOCK_DURATION_MS,
      stalledIntervalMs: e.WORKER_STALLED_INTERVAL_MS,
      maxStalledCount: e.WORKER_MAX_STALLED_COUNT,
      metrics: e.WORKER_METRICS_PORT === undefined ? null : { port: e.WORKER_METRICS_PORT, host: e.METRICS_HOST },
    },
    jobs: { attempts: e.JOB_ATTEMPTS, backoffMs: e.JOB_BACKOFF_MS },
    schedules: { rollup: e.ROLLUP_SCHEDULE, reports: e.REPORTS_SCHEDULE },
  };
}
