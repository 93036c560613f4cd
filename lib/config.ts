// The one place that reads the environment: validates it once and hands out a typed config.
// Command-line flags override environment values; nothing else in the project reads process.env.
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { PROJECT_ROOT } from './version.ts';
import { CronExpressionParser } from 'cron-parser';

/** The platform configuration shipped with the code (config/platform.json; PLATFORM_CONFIG overrides). */
export const DEFAULT_PLATFORM_CONFIG_FILE = path.join(PROJECT_ROOT, 'config', 'platform.json');

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

const TTL = /^\d{1,6}[smhd]$/;
const TTL_HINT = 'a lifetime such as 30d, 12h, 90m or 3600s';

const EnvSchema = z.object({
  WAREHOUSE_DIR: z.string().min(1).default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
  DUCKDB_THREADS: positiveInt.optional(),
  DUCKDB_MEMORY_LIMIT: memorySize.optional(),
  DUCKDB_MAX_CONCURRENT: positiveInt.default(2),
  SNAPSHOT_KEEP: positiveInt.default(5),
  SNAPSHOT_DEBRIS_GRACE_SECONDS: z.coerce.number().int().nonnegative().default(3600),
  PUBLISH_LOCK_STALE_SECONDS: z.coerce.number().int().min(2).default(10),
  AS_OF_MAX_SKEW_SECONDS: z.coerce.number().int().nonnegative().default(300),
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
  // Limits against abuse (docs/operations.md, "Limits").
  API_HEADERS_TIMEOUT_SECONDS: z.coerce.number().positive().default(20),
  API_MAX_CONNECTIONS: positiveInt.default(1000),
  API_DUCKDB_MAX_QUEUED: positiveInt.default(32),
  API_EXPORTS_MAX: positiveInt.default(4),
  API_EXPORTS_PER_TENANT: positiveInt.default(2),
  API_EXPORT_DUCKDB_SLOTS: positiveInt.default(1),
  API_EXPORT_DAY_TIMEOUT_SECONDS: z.coerce.number().positive().default(60),
  API_EXPORT_SLICE_MB: z.coerce.number().positive().default(4),
  API_ONDEMAND_MAX: positiveInt.default(8),
  API_ONDEMAND_PER_TENANT: positiveInt.default(2),
  REVOCATION_POLL_SECONDS: z.coerce.number().positive().default(1),
  TOKEN_TENANT_TTL_DEFAULT: z.string().regex(TTL, TTL_HINT).default('30d'),
  TOKEN_TENANT_TTL_MAX: z.string().regex(TTL, TTL_HINT).default('90d'),
  TOKEN_OPERATOR_TTL_DEFAULT: z.string().regex(TTL, TTL_HINT).default('1d'),
  TOKEN_OPERATOR_TTL_MAX: z.string().regex(TTL, TTL_HINT).default('30d'),
  // The API's own DuckDB and caches: sized for a server whose memory must not grow with history,
  // separately from the jobs' (DUCKDB_*), which crunch whole partitions.
  API_DUCKDB_THREADS: positiveInt.default(1),
  API_DUCKDB_MEMORY_LIMIT: memorySize.default('192MB'),
  API_DUCKDB_MAX_CONCURRENT: positiveInt.default(2),
  API_DUCKDB_ALLOCATOR_FLUSH: memorySize.default('2MB'),
  API_RESPONSE_CACHE_MB: z.coerce.number().nonnegative().default(32),
  API_SERIES_CACHE_MB: z.coerce.number().nonnegative().default(16),
  API_REPORT_CACHE_MB: z.coerce.number().nonnegative().default(32),
  API_REPORT_COMPOSED_MAX: z.coerce.number().int().nonnegative().default(8),
  API_REPLAY_ENTRIES: z.coerce.number().int().nonnegative().default(10_000),
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
  // The collector (SDK ingest, docs/sdk-ingest.md).
  COLLECTOR_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  COLLECTOR_HOST: z.string().min(1).optional(),
  COLLECTOR_SPOOL_DIR: z.string().min(1).optional(),
  COLLECTOR_MAX_BODY_BYTES: positiveInt.default(1024 * 1024),
  COLLECTOR_MAX_INFLATED_BYTES: positiveInt.default(8 * 1024 * 1024),
  COLLECTOR_MAX_REPORTS: positiveInt.default(2000),
  COLLECTOR_MAX_FUTURE_SECONDS: z.coerce.number().int().nonnegative().default(600),
  COLLECTOR_LATE_HORIZON_DAYS: z.coerce.number().positive().default(35),
  COLLECTOR_RATE_LIMIT_REPORTS_PER_SECOND: z.coerce.number().nonnegative().default(20_000),
  COLLECTOR_INFLATED_BYTES_PER_KEY_PER_SECOND: z.coerce.number().nonnegative().default(64 * 1024 * 1024),
  COLLECTOR_CHECK_MS_PER_KEY_PER_SECOND: z.coerce.number().nonnegative().default(1000),
  COLLECTOR_MAX_CHECK_MS: positiveInt.default(1000),
  COLLECTOR_KEY_FAILURES_PER_SECOND: z.coerce.number().nonnegative().default(5),
  COLLECTOR_FLUSH_SECONDS: z.coerce.number().positive().default(120),
  COLLECTOR_FLUSH_REPORTS: positiveInt.default(200_000),
  COLLECTOR_SPOOL_MAX_BYTES: positiveInt.default(2 * 1024 ** 3),
  COLLECTOR_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().default(30),
  COLLECTOR_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  // The flusher's DuckDB (landing spool segments as Parquet), sized on its own: it is what bounds
  // the collector's memory beyond the requests in flight (docs/operations.md).
  COLLECTOR_DUCKDB_MEMORY_LIMIT: memorySize.default('512MB'),
  COLLECTOR_WORKERS: z.coerce.number().int().nonnegative().max(64).optional(),
  // V8's heap growing factor for a `collect` process (cli/actions/collect.ts); 0 leaves V8's own.
  COLLECTOR_HEAP_GROWING_PERCENT: z.coerce.number().int().nonnegative().max(1000).default(300),
});

export interface DuckDbConfig {
  /** DuckDB worker threads per process. */
  threads: number;
  /** DuckDB memory limit, e.g. "4GB". */
  memoryLimit: string;
  /** Cap on DuckDB calls running at once in one process (they use libuv's pool). */
  maxConcurrent: number;
  /**
   * What DuckDB's allocator may keep of the memory a statement freed, e.g. "8MB" (warehouse/duckdb.ts
   * ALLOCATOR_FLUSH_THRESHOLD when absent).
   */
  allocatorFlushThreshold?: string;
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
    /** An asOf further ahead of the clock than this is refused (a snapshot from the future blocks every later one). */
    asOfMaxSkewMs: number;
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
    /** Receiving a request's headers has this deadline (408 / connection closed beyond it). */
    headersTimeoutMs: number;
    /** Open connections the server accepts at once; beyond it new ones are closed at once. */
    maxConnections: number;
    /** Calls of a request's DuckDB work that may wait for a slot; beyond it 503 `busy`. */
    duckdbMaxQueued: number;
    exports: {
      /** Exports running at once in the process (429 beyond). */
      max: number;
      /** Exports running at once per tenant (429 beyond). */
      perTenant: number;
      /** DuckDB slots of the export pool (separate from the shared pool). */
      duckdbSlots: number;
      /** Each DuckDB call of an export (one slice's query) is interrupted after this. */
      dayTimeoutMs: number;
      /** Landed bytes of a day that one export query reads at most (larger days are cut in hours). */
      sliceBytes: number;
    };
    onDemand: {
      /** On-demand series computed at once in the process (503 `busy` beyond). */
      max: number;
      /** On-demand series computed at once per tenant (429 beyond). */
      perTenant: number;
    };
    /** How often the deny list and the tenant list are re-checked (revocation takes this long at most). */
    revocationPollMs: number;
    /** The API process's DuckDB (series reads, on-demand sizes, pilot reports, exports). */
    duckdb: DuckDbConfig;
    caches: ApiCacheConfig;
  };
  /** Lifetimes of issued tokens (`token --ttl`): the default and the most allowed (e.g. 30d). */
  tokens: { tenant: { defaultTtl: string; maxTtl: string }; operator: { defaultTtl: string; maxTtl: string } };
  redis: RedisConfig;
  worker: WorkerConfig;
  /** Retries of every job: attempts in all, exponential backoff from `backoffMs`. */
  jobs: { attempts: number; backoffMs: number };
  /** Cron patterns (UTC) of the job schedulers installed by `cli schedule`. */
  schedules: { rollup: string; reports: string };
  collector: CollectorConfig;
}

/** The collector of SDK session reports (docs/sdk-ingest.md has the why of each default). */
export interface CollectorConfig {
  port: number;
  host: string;
  /** A listener serving only GET /metrics (METRICS_HOST); null: none. */
  metrics: { port: number; host: string } | null;
  /** This collector's own spool folder; null: <warehouse>/spool/<host>-<port>. */
  spoolDir: string | null;
  /** Largest request body on the wire (413 beyond). */
  maxBodyBytes: number;
  /** Largest body once gunzipped: inflating stops there (413). */
  maxInflatedBytes: number;
  /** Most reports in one request (413 beyond). */
  maxReports: number;
  /** A report's ts may be at most this far ahead of the collector's clock. */
  maxFutureMs: number;
  /** A report's ts may be at most this old (the late-data horizon). */
  lateHorizonMs: number;
  /** Reports per second one ingest key may send to one collector process; 0: no limit. */
  rateLimitPerKey: number;
  /** Bytes per second (once inflated) one ingest key may have checked by one collector process; 0: no limit. */
  inflatedBytesPerKey: number;
  /** Milliseconds per second of batch checking (inflate, parse, checks) one ingest key may use; 0: no limit. */
  checkMsPerKey: number;
  /** Time one batch may take to be read and checked (413 beyond). */
  maxCheckMs: number;
  /** Refused ingest keys per second one client address may present (bursts of 10×); 429 beyond; 0: no limit. */
  keyFailuresPerAddress: number;
  /** The spool is landed as Parquet when its open segment is this old... */
  flushIntervalMs: number;
  /** ...or holds this many reports, whichever comes first. */
  flushReports: number;
  /** Beyond this many bytes of unlanded spool, requests get 503 with Retry-After. */
  spoolMaxBytes: number;
  /** How often the ingest keys and the tenant list are looked at again (a revocation takes this long at most). */
  revocationPollMs: number;
  requestTimeoutMs: number;
  /** Memory limit of the flusher's DuckDB (it spills to the host's scratch folder beyond). */
  duckdbMemoryLimit: string;
  /** Worker threads that check posted batches (collector/batch-pool.ts); 0: on the event loop's thread. */
  workers: number;
  /** V8's old generation grows by this much between full collections in a `collect` process; 0: V8's own rule. */
  heapGrowingPercent: number;
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
  /** Remembered answers (entries: token and URL → response cache key) replayed before the routers; 0: off. */
  replays: number;
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
  collectorPort?: number | undefined;
  /** The collector's metrics listener port (flag over env COLLECTOR_METRICS_PORT). */
  collectorMetricsPort?: number | undefined;
  collectorHost?: string | undefined;
  spoolDir?: string | undefined;
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
      asOfMaxSkewMs: e.AS_OF_MAX_SKEW_SECONDS * 1000,
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
      headersTimeoutMs: e.API_HEADERS_TIMEOUT_SECONDS * 1000,
      maxConnections: e.API_MAX_CONNECTIONS,
      duckdbMaxQueued: e.API_DUCKDB_MAX_QUEUED,
      exports: {
        max: e.API_EXPORTS_MAX,
        perTenant: e.API_EXPORTS_PER_TENANT,
        duckdbSlots: e.API_EXPORT_DUCKDB_SLOTS,
        dayTimeoutMs: e.API_EXPORT_DAY_TIMEOUT_SECONDS * 1000,
        sliceBytes: Math.round(e.API_EXPORT_SLICE_MB * 2 ** 20),
      },
      onDemand: { max: e.API_ONDEMAND_MAX, perTenant: e.API_ONDEMAND_PER_TENANT },
      revocationPollMs: e.REVOCATION_POLL_SECONDS * 1000,
      duckdb: {
        threads: e.API_DUCKDB_THREADS,
        memoryLimit: e.API_DUCKDB_MEMORY_LIMIT,
        maxConcurrent: e.API_DUCKDB_MAX_CONCURRENT,
        allocatorFlushThreshold: e.API_DUCKDB_ALLOCATOR_FLUSH,
      },
      caches: {
        responsesBytes: Math.round(e.API_RESPONSE_CACHE_MB * 2 ** 20),
        seriesBytes: Math.round(e.API_SERIES_CACHE_MB * 2 ** 20),
        reportsBytes: Math.round(e.API_REPORT_CACHE_MB * 2 ** 20),
        composedReports: e.API_REPORT_COMPOSED_MAX,
        replays: e.API_REPLAY_ENTRIES,
      },
    },
    tokens: {
      tenant: { defaultTtl: e.TOKEN_TENANT_TTL_DEFAULT, maxTtl: e.TOKEN_TENANT_TTL_MAX },
      operator: { defaultTtl: e.TOKEN_OPERATOR_TTL_DEFAULT, maxTtl: e.TOKEN_OPERATOR_TTL_MAX },
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
    collector: {
      port: overrides.collectorPort ?? e.COLLECTOR_PORT,
      host: overrides.collectorHost ?? e.COLLECTOR_HOST ?? e.HOST,
      spoolDir: overrides.spoolDir ? path.resolve(overrides.spoolDir) : e.COLLECTOR_SPOOL_DIR ? path.resolve(e.COLLECTOR_SPOOL_DIR) : null,
      maxBodyBytes: e.COLLECTOR_MAX_BODY_BYTES,
      maxInflatedBytes: e.COLLECTOR_MAX_INFLATED_BYTES,
      maxReports: e.COLLECTOR_MAX_REPORTS,
      maxFutureMs: e.COLLECTOR_MAX_FUTURE_SECONDS * 1000,
      lateHorizonMs: Math.round(e.COLLECTOR_LATE_HORIZON_DAYS * 86_400_000),
      rateLimitPerKey: e.COLLECTOR_RATE_LIMIT_REPORTS_PER_SECOND,
      inflatedBytesPerKey: e.COLLECTOR_INFLATED_BYTES_PER_KEY_PER_SECOND,
      checkMsPerKey: e.COLLECTOR_CHECK_MS_PER_KEY_PER_SECOND,
      maxCheckMs: e.COLLECTOR_MAX_CHECK_MS,
      keyFailuresPerAddress: e.COLLECTOR_KEY_FAILURES_PER_SECOND,
      flushIntervalMs: Math.round(e.COLLECTOR_FLUSH_SECONDS * 1000),
      flushReports: e.COLLECTOR_FLUSH_REPORTS,
      spoolMaxBytes: e.COLLECTOR_SPOOL_MAX_BYTES,
      requestTimeoutMs: e.COLLECTOR_REQUEST_TIMEOUT_SECONDS * 1000,
      revocationPollMs: e.REVOCATION_POLL_SECONDS * 1000,
      duckdbMemoryLimit: e.COLLECTOR_DUCKDB_MEMORY_LIMIT,
      workers: e.COLLECTOR_WORKERS ?? os.availableParallelism(),
      heapGrowingPercent: e.COLLECTOR_HEAP_GROWING_PERCENT,
      metrics:
        (overrides.collectorMetricsPort ?? e.COLLECTOR_METRICS_PORT) === undefined
          ? null
          : { port: (overrides.collectorMetricsPort ?? e.COLLECTOR_METRICS_PORT)!, host: e.METRICS_HOST },
    },
  };
}
