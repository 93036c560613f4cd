// The one place that reads the environment: validates it once and hands out a typed config.
// Command-line flags override environment values; nothing else in the project reads process.env.
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_PLATFORM_CONFIG_FILE } from '../config/platform.ts';
import { CronExpressionParser } from 'cron-parser';

const positiveInt = z.coerce.number().int().positive();

/** A DuckDB memory size such as 4GB or 512MiB. */
const memorySize = z
  .string()
  .regex(/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, 'a size such as 4GB or 512MiB');

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
  DUCKDB_MEMORY_LIMIT: memorySize.optional(),
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
  API_QUERY_TIMEOUT_SECONDS: z.coerce.number().positive().default(15),
  API_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().default(30),
  SNAPSHOT_POLL_SECONDS: z.coerce.number().positive().default(2),
  // The API's own DuckDB and caches: sized for a server whose memory must not grow with history,
  // separately from the jobs' (DUCKDB_*), which crunch whole partitions.
  API_DUCKDB_THREADS: positiveInt.default(1),
  API_DUCKDB_MEMORY_LIMIT: memorySize.default('192MB'),
  API_DUCKDB_MAX_CONCURRENT: positiveInt.default(2),
  API_RESPONSE_CACHE_MB: z.coerce.number().nonnegative().default(32),
  API_SERIES_CACHE_MB: z.coerce.number().nonnegative().default(16),
  API_REPORT_CACHE_MB: z.coerce.number().nonnegative().default(32),
  API_REPORT_COMPOSED_MAX: z.coerce.number().int().nonnegative().default(8),
  // The worker tier (BullMQ on Redis).
  REDIS_URL: redisUrlSchema.default('redis://127.0.0.1:6379'),
  QUEUE_PREFIX: queuePrefixSchema.default('p2ptel'),
  REDIS_CONNECT_TIMEOUT_MS: positiveInt.default(5000),
  WORKER_CONCURRENCY: positiveInt.default(1),
  WORKER_SHUTDOWN_GRACE_SECONDS: z.coerce.number().positive().default(30),
  WORKER_LOCK_DURATION_MS: z.coerce.number().int().min(1000).default(30_000),
  WORKER_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).default(30_000),
  WORKER_MAX_STALLED_COUNT: z.coerce.number().int().nonnegative().default(1),
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
  api: {
    port: number;
    host: string;
    /** Work that touches DuckDB on a request (on-demand series) is cancelled after this. */
    queryTimeoutMs: number;
    /** A request not answered (or, for exports, not started) within this gets 503. */
    requestTimeoutMs: number;
    /** How often the server checks CURRENT besides watching it. */
    snapshotPollMs: number;
    /** The API process's DuckDB (series reads, on-demand sizes, pilot reports, exports). */
    duckdb: DuckDbConfig;
    caches: ApiCacheConfig;
  };
  redis: RedisConfig;
  worker: WorkerConfig;
  /** Retries of every job: attempts in all, exponential backoff from `backoffMs`. */
  jobs: { attempts: number; backoffMs: number };
  /** Cron patterns (UTC) of the job schedulers installed by `cli schedule`. */
  schedules: { rollup: string; reports: string };
}

/** Bounds of the API's in-memory caches, in bytes (or entries where said). */
export interface ApiCacheConfig {
  /** Serialised telemetry responses with their ETags, of the current snapshot (and, briefly, the previous). */
  responsesBytes: number;
  /** Series rows kept for reuse across windows: on-demand bucket sizes, billing's daily series. */
  seriesBytes: number;
  /** Pilot report bodies. */
  reportsBytes: number;
  /** Composed pilot report objects (entries), so another format of one report skips the SQL. */
  composedReports: number;
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
}

export type LogLevel = NonNullable<z.infer<typeof EnvSchema>['LOG_LEVEL']>;

export interface ConfigOverrides {
  warehouseDir?: string | undefined;
  port?: number | undefined;
  host?: string | undefined;
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
    api: {
      port: overrides.port ?? e.PORT,
      host: overrides.host ?? e.HOST,
      queryTimeoutMs: e.API_QUERY_TIMEOUT_SECONDS * 1000,
      requestTimeoutMs: e.API_REQUEST_TIMEOUT_SECONDS * 1000,
      snapshotPollMs: e.SNAPSHOT_POLL_SECONDS * 1000,
      duckdb: { threads: e.API_DUCKDB_THREADS, memoryLimit: e.API_DUCKDB_MEMORY_LIMIT, maxConcurrent: e.API_DUCKDB_MAX_CONCURRENT },
      caches: {
        responsesBytes: Math.round(e.API_RESPONSE_CACHE_MB * 2 ** 20),
        seriesBytes: Math.round(e.API_SERIES_CACHE_MB * 2 ** 20),
        reportsBytes: Math.round(e.API_REPORT_CACHE_MB * 2 ** 20),
        composedReports: e.API_REPORT_COMPOSED_MAX,
      },
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
    },
    jobs: { attempts: e.JOB_ATTEMPTS, backoffMs: e.JOB_BACKOFF_MS },
    schedules: { rollup: e.ROLLUP_SCHEDULE, reports: e.REPORTS_SCHEDULE },
  };
}
