// Settings of every process: the warehouse, logging, the jobs' DuckDB, snapshots, platform
// configuration and secrets (entries of the settings table, lib/settings/table.ts).
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { setting } from './define.ts';
import { START_DEFAULTS, WORKER_DEFAULTS } from './command-defaults.ts';
import { PROJECT_ROOT } from '../version.ts';
import { daysToMs, memorySize, mibToBytes, nonNegativeInt, nonNegativeNumber, positiveInt, positiveNumber, secondsToMs, text } from './values.ts';

/** The platform configuration shipped with the code (config/platform.json; PLATFORM_CONFIG overrides). */
export const DEFAULT_PLATFORM_CONFIG_FILE = path.join(PROJECT_ROOT, 'config', 'platform.json');

/** Half the machine, 1 to 8 GiB: DuckDB's own default (80 %) is too greedy for a shared host. */
function defaultMemoryLimit(): string {
  return `${Math.max(1, Math.min(8, Math.floor(os.totalmem() / 2 ** 30 / 2)))}GiB`;
}

const resolve = (file: string) => path.resolve(file);
const orNull = (value: string | undefined) => value ?? null;

export const CORE = {
  WAREHOUSE_DIR: setting({
    schema: text.default('./data'),
    doc: 'the warehouse folder',
    at: 'warehouseDir',
    as: resolve,
    flags: { warehouse: { flag: '--warehouse <dir>', help: 'warehouse folder' } },
  }),
  LOG_LEVEL: setting({
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    shown: '`warn` for commands, `info` for services',
    doc: 'pino level; logs are JSON lines on stderr',
    at: 'logLevel',
  }),
  DUCKDB_THREADS: setting({
    schema: positiveInt.default(() => Math.max(1, os.availableParallelism())),
    shown: 'cores',
    doc: 'DuckDB threads per job process (rollups, reports, CLI)',
    at: 'duckdb.threads',
  }),
  DUCKDB_MEMORY_LIMIT: setting({
    schema: memorySize.default(defaultMemoryLimit),
    shown: `half the RAM, 1 to 8 GiB (\`start\`: ${START_DEFAULTS.DUCKDB_MEMORY_LIMIT}; \`worker\`: ${WORKER_DEFAULTS.DUCKDB_MEMORY_LIMIT})`,
    doc: 'DuckDB memory limit of a job process: its rollups, compaction and pilot reports (it spills to `tmp/` beyond; lower is less RSS and slower big runs: docs/operations.md, "Memory")',
    at: 'duckdb.memoryLimit',
  }),
  DUCKDB_ALLOCATOR_BULK_FLUSH: setting({
    schema: memorySize.default('8MB'),
    doc: 'what the jobs\' DuckDB allocator may keep, for the rest of a statement, of memory the statement frees in bulk (a hash table, a sort); a larger free goes back to the system at once and is faulted in again when next needed. Higher is fewer page faults for more RSS: at 512MB (DuckDB\'s own default) a full run of 12 large files took 0.93× the time for 1.02× the peak RSS, one of 972 small files 0.97× for 1.15–1.5×; docs/operations.md, "Memory"',
    at: 'duckdb.allocatorBulkFlushThreshold',
  }),
  DUCKDB_MAX_CONCURRENT: setting({ schema: positiveInt.default(2), doc: "DuckDB calls in flight per job process (they use libuv's pool)", at: 'duckdb.maxConcurrent' }),
  P2PTEL_SQL_TRACE: setting({
    schema: z.string().optional(),
    shown: 'off',
    doc: '`1`: the time and opening text of every DuckDB statement on stderr, in every process (docs/warehouse-state.md)',
    at: ['duckdb.sqlTrace', 'api.duckdb.sqlTrace'],
    as: (value) => value === '1',
  }),
  ROLLUP_PARTITION_CONCURRENCY: setting({ schema: positiveInt.default(1), doc: 'customer partitions an inline run computes at once', at: 'partitionConcurrency' }),
  ROLLUP_REBUILD_BUDGET: setting({
    schema: nonNegativeInt.default(8),
    doc: "after a deployment that changes a state's SQL (same layout), the stale partitions a run (`pipeline`, the worker tier) rebuilds at most beside those with new files, today's first, then newest first; the others serve as they are until rebuilt (docs/warehouse-state.md). with ROLLUP_REBUILD_SECONDS above 0, `start`'s runs rebuild none and its background rebuild takes at most this many a step. 0: rebuild them all before the run publishes (`start` too)",
    at: 'rebuild.budgetPartitions',
  }),
  ROLLUP_REBUILD_BUDGET_REPORTS: setting({
    schema: positiveInt.default(1_000_000),
    doc: "and the reports those stale partitions hold together at most (one partition at least: a partition is rebuilt whole); likewise a step of `start`'s background rebuild (ROLLUP_REBUILD_SECONDS)",
    at: 'rebuild.budgetReports',
  }),
  ROLLUP_REBUILD_SECONDS: setting({
    schema: nonNegativeNumber.default(0),
    shown: '0 (off)',
    doc: "`start` only: above 0, its runs rebuild no stale state and a background rebuild does (docs/warehouse-state.md, \"After a deployment\"), in steps of about this long (as many partitions as fit, at most ROLLUP_REBUILD_BUDGET), taken between runs, each started when no live run is in flight or due or after waiting this long for that, asking for a run after this long of its work. 0: each run rebuilds ROLLUP_REBUILD_BUDGET of them. Not the default: measured no better (docs/benchmarks.md)",
    at: 'rebuild.backgroundStepMs',
    as: secondsToMs,
  }),
  COMPACTION_SMALL_FILE_MB: setting({
    schema: positiveNumber.default(16),
    doc: 'a landed file smaller than this is small: compaction merges the small files of a partition into one (docs/warehouse-state.md)',
    at: 'compaction.smallFileBytes',
    as: mibToBytes,
  }),
  COMPACTION_MIN_FILES: setting({
    schema: z.coerce.number().int('a whole number').min(2, '2 or more').default(16),
    doc: "a partition's small files of one size tier are merged once it holds this many of them (`compact --force`: any partition of two files)",
    at: 'compaction.minFiles',
  }),
  LAYER_MERGE_MAX_REPORTS: setting({
    // The default is warehouse/layered-state.ts's MAX_MERGED_LAYER_REPORTS (not imported: settings load no warehouse code).
    schema: positiveInt.default(16_000_000),
    doc: "the largest layer compaction's background merge makes of today's layered states (docs/warehouse-state.md, \"Merging layers\"): up to it a day's layer sizes double going back (a handful of layers, each report rewritten a few times); past it each 16 M reports of a day stay a layer of their own. A merge's memory does not grow with it (its sorts and groupings spill past DUCKDB_MEMORY_LIMIT), its time and scratch disk do: 6 M reports took 42 s at 256MB",
    at: 'compaction.layerMergeMaxReports',
  }),
  ACTIVITY_HORIZON_SECONDS: setting({
    schema: positiveInt.default(120),
    doc: 'a session is active when its latest report is at most this old and not final',
    at: 'activityHorizonSeconds',
  }),
  SNAPSHOT_KEEP: setting({ schema: positiveInt.default(5), doc: 'published snapshots kept, the current one included', at: 'snapshots.keep' }),
  SNAPSHOT_DEBRIS_GRACE_SECONDS: setting({
    schema: nonNegativeInt.default(3600),
    doc: 'age after which any unpublished build folder is debris, whoever made it (and the least time a landed file that a compacted file covers is kept)',
    at: 'snapshots.debrisGraceMs',
    as: secondsToMs,
  }),
  STATE_SUPERSEDED_GRACE_SECONDS: setting({
    schema: nonNegativeInt.default(60),
    doc: 'a partition state replaced by a newer one is removed once the newer one is this old, unless a run in flight holds a lease on it (docs/warehouse-state.md)',
    at: 'snapshots.stateSupersededGraceMs',
    as: secondsToMs,
  }),
  AS_OF_MAX_SKEW_SECONDS: setting({
    schema: nonNegativeInt.default(300),
    doc: 'an asOf further ahead of the clock is refused (a snapshot from the future blocks every later one)',
    at: 'snapshots.asOfMaxSkewMs',
    as: secondsToMs,
  }),
  PUBLISH_LOCK_STALE_SECONDS: setting({
    schema: z.coerce.number().int('a whole number').min(2, '2 or more').default(5),
    doc: 'a warehouse lock (publication, partition builds, runs) is renewed every second while held; one not renewed for this long belongs to a dead process of another host and is taken over (a dead process of this host: at once)',
    at: 'snapshots.lockStaleMs',
    as: secondsToMs,
  }),
  PLATFORM_CONFIG: setting({
    schema: text.default(DEFAULT_PLATFORM_CONFIG_FILE),
    shown: '`config/platform.json`',
    doc: 'the platform configuration document',
    at: 'platformConfigFile',
    as: resolve,
  }),
  TOKEN_SECRET: setting({
    schema: text.optional(),
    shown: '(generated into `control/token-secret`)',
    doc: 'signing secret of API tokens, base64url, ≥ 32 bytes',
    at: 'tokenSecret',
    as: orNull,
  }),
  MANIFEST_SIGNING_KEY: setting({
    schema: text.optional(),
    shown: '(generated into `control/manifest-signing-key.pem`)',
    doc: 'the ES256 manifest signing key, PEM or JWK',
    at: 'manifestSigningKey',
    as: orNull,
  }),
  REPORT_KEY_RETENTION_DAYS: setting({
    schema: positiveNumber.default(400),
    doc: 'a report-signing key retired by `keys rotate` stays in `/.well-known/jwks.json` this long, so that reports it signed still verify (docs/pilot-reports.md, "Signatures")',
    at: 'reportKeys.retentionMs',
    as: daysToMs,
  }),
};
