// The one place that reads the environment: validates it once and hands out a typed config.
// Command-line flags override environment values; nothing else in the project reads process.env.
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_PLATFORM_CONFIG_FILE } from '../config/platform.ts';

const positiveInt = z.coerce.number().int().positive();

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
  API_QUERY_TIMEOUT_SECONDS: z.coerce.number().positive().default(15),
  API_REQUEST_TIMEOUT_SECONDS: z.coerce.number().positive().default(30),
  SNAPSHOT_POLL_SECONDS: z.coerce.number().positive().default(2),
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
  };
}

export type LogLevel = NonNullable<z.infer<typeof EnvSchema>['LOG_LEVEL']>;

export interface ConfigOverrides {
  warehouseDir?: string | undefined;
  port?: number | undefined;
  host?: string | undefined;
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
    },
  };
}
