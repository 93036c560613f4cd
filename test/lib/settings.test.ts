// The settings table: the config it makes (flags over the environment over a process's defaults,
// fallbacks, listeners), its messages, the docs written from it, and the rule that nothing but
// lib/config.ts reads the environment.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../lib/config.ts';
import { SETTINGS, type AppConfig } from '../../lib/settings/table.ts';
import { START_DEFAULTS, WORKER_DEFAULTS } from '../../lib/settings/command-defaults.ts';
import { SETTINGS_DOCS, withSettingsTables } from '../../lib/settings/docs.ts';
import { PROJECT_ROOT } from '../../lib/version.ts';

describe('config from the settings table', () => {
  it('layers the defaults of a process, the environment and the flags, in that order', () => {
    expect(loadConfig({ env: {} }).logLevel).toBe('info');
    expect(loadConfig({ env: {}, defaults: { LOG_LEVEL: 'warn' } }).logLevel).toBe('warn');
    expect(loadConfig({ env: { LOG_LEVEL: 'error' }, defaults: { LOG_LEVEL: 'warn' } }).logLevel).toBe('error');
    const c = loadConfig({ env: { PORT: '81', WORKER_SHUTDOWN_GRACE_SECONDS: '2.5' }, overrides: { PORT: 82, WAREHOUSE_DIR: 'wh' } });
    expect(c.api.port).toBe(82);
    expect(c.warehouseDir).toBe(path.resolve('wh'));
    expect(c.worker.shutdownGraceMs).toBe(2500);
  });

  it("gives `start` and a worker their own DuckDB memory limit, which the environment overrides", () => {
    // A command's defaults are read as the environment is (strings), as cli/runtime.ts hands them over.
    const withDefaults = (defaults: Record<string, string>, env: Record<string, string> = {}) => loadConfig({ env, defaults });
    const table = loadConfig({ env: {} });
    expect(table.compaction.layerMergeMaxReports).toBe(16_000_000);
    const start = withDefaults(START_DEFAULTS);
    expect(start.duckdb.memoryLimit).toBe('256MB');
    expect(start.compaction.layerMergeMaxReports).toBe(16_000_000);
    expect(withDefaults(WORKER_DEFAULTS).duckdb.memoryLimit).toBe('256MB');
    const chosen = withDefaults(START_DEFAULTS, { DUCKDB_MEMORY_LIMIT: '2GB', LAYER_MERGE_MAX_REPORTS: '500000' });
    expect([chosen.duckdb.memoryLimit, chosen.compaction.layerMergeMaxReports]).toEqual(['2GB', 500_000]);
  });

  it("takes a collector's interface from HOST in the environment, not from the API's --host", () => {
    expect(loadConfig({ env: {} }).collector.host).toBe('127.0.0.1');
    expect(loadConfig({ env: { HOST: '0.0.0.0' } }).collector.host).toBe('0.0.0.0');
    expect(loadConfig({ env: { HOST: '0.0.0.0', COLLECTOR_HOST: '10.0.0.2' } }).collector.host).toBe('10.0.0.2');
    expect(loadConfig({ env: {}, overrides: { HOST: '0.0.0.0' } }).collector.host).toBe('127.0.0.1');
  });

  it('puts each metrics listener on METRICS_HOST, and none without its port', () => {
    const c = loadConfig({ env: { METRICS_HOST: '10.0.0.1', WORKER_METRICS_PORT: '9200' }, overrides: { COLLECTOR_METRICS_PORT: 9300 } });
    expect(c.api.metrics).toBeNull();
    expect(c.worker.metrics).toEqual({ port: 9200, host: '10.0.0.1' });
    expect(c.collector.metrics).toEqual({ port: 9300, host: '10.0.0.1' });
  });

  it('turns P2PTEL_SQL_TRACE=1 on for every DuckDB of the process', () => {
    expect(loadConfig({ env: {} }).duckdb.sqlTrace).toBe(false);
    const c = loadConfig({ env: { P2PTEL_SQL_TRACE: '1' } });
    expect([c.duckdb.sqlTrace, c.api.duckdb.sqlTrace]).toEqual([true, true]);
  });

  it('refuses a bad environment naming every bad variable, with the same words as its flag', () => {
    expect(() => loadConfig({ env: { PORT: '70000', WORKER_CONCURRENCY: '0' } })).toThrow(
      'invalid environment: PORT: from 0 to 65535; WORKER_CONCURRENCY: greater than 0',
    );
  });

  it('takes a rollup interval instead of the cron, never both', () => {
    // Live by default: a rollup every 2 s; the cron with ROLLUP_SCHEDULE or ROLLUP_BATCH (`schedule --batch`).
    expect(loadConfig({ env: {} }).schedules).toMatchObject({ rollup: '*/5 * * * *', rollupEveryMs: 2000, batch: false });
    expect(loadConfig({ env: { ROLLUP_BATCH: '1' } }).schedules).toMatchObject({ rollup: '*/5 * * * *', rollupEveryMs: null, batch: true });
    expect(loadConfig({ env: {}, overrides: { ROLLUP_BATCH: true } }).schedules.rollupEveryMs).toBeNull();
    expect(loadConfig({ env: { ROLLUP_SCHEDULE: '*/10 * * * *' } }).schedules).toMatchObject({ rollup: '*/10 * * * *', rollupEveryMs: null });
    expect(() => loadConfig({ env: { ROLLUP_EVERY: '5s', ROLLUP_BATCH: 'true' } })).toThrow(/--batch \(ROLLUP_BATCH\) are exclusive/);
    expect(() => loadConfig({ env: { ROLLUP_BATCH: 'yes' } })).toThrow('invalid environment: ROLLUP_BATCH: a switch: 1 or 0');
    expect(loadConfig({ env: { ROLLUP_EVERY: '5s' } }).schedules.rollupEveryMs).toBe(5000);
    expect(loadConfig({ env: {}, overrides: { ROLLUP_EVERY: 90_000 } }).schedules.rollupEveryMs).toBe(90_000);
    expect(loadConfig({ env: { ROLLUP_EVERY: '1.5m' } }).schedules.rollupEveryMs).toBe(90_000);
    expect(() => loadConfig({ env: { ROLLUP_EVERY: '5s', ROLLUP_SCHEDULE: '* * * * *' } })).toThrow(/are exclusive/);
    expect(() => loadConfig({ env: { ROLLUP_EVERY: '500ms' } })).toThrow('invalid environment: ROLLUP_EVERY: a duration such as 5s, 30s or 2m, from 1s to 24h');
    // Beyond a Node timer's reach (2^31 - 1 ms) the release would fire at once instead of waiting.
    expect(() => loadConfig({ env: { API_DUCKDB_RELEASE_IDLE_SECONDS: '1e12' } })).toThrow('invalid environment: API_DUCKDB_RELEASE_IDLE_SECONDS: at most 3600 (an hour)');
  });

  it("refuses a timer's wait beyond a Node timer's reach, which would fire at once, and takes the longest one", () => {
    const seconds = {
      API_QUERY_TIMEOUT_SECONDS: (c: AppConfig) => c.api.queryTimeoutMs,
      API_REQUEST_TIMEOUT_SECONDS: (c: AppConfig) => c.api.requestTimeoutMs,
      API_HEADERS_TIMEOUT_SECONDS: (c: AppConfig) => c.api.headersTimeoutMs,
      SNAPSHOT_POLL_SECONDS: (c: AppConfig) => c.api.snapshotPollMs,
      REVOCATION_POLL_SECONDS: (c: AppConfig) => c.collector.revocationPollMs,
      API_EXPORT_DAY_TIMEOUT_SECONDS: (c: AppConfig) => c.api.exports.dayTimeoutMs,
      COLLECTOR_REQUEST_TIMEOUT_SECONDS: (c: AppConfig) => c.collector.requestTimeoutMs,
      COLLECTOR_FLUSH_SECONDS: (c: AppConfig) => c.collector.flushIntervalMs,
      WORKER_SHUTDOWN_GRACE_SECONDS: (c: AppConfig) => c.worker.shutdownGraceMs,
    };
    for (const [name, read] of Object.entries(seconds)) {
      expect(() => loadConfig({ env: { [name]: '1e12' } }), name).toThrow(`invalid environment: ${name}: at most 2147483 (about 24.8 days: a Node timer's longest wait)`);
      // 2^31 - 1 ms is the longest: 2147483 s is within it.
      expect(read(loadConfig({ env: { [name]: '2147483' } })), name).toBe(2_147_483_000);
    }
    const ms = {
      REDIS_CONNECT_TIMEOUT_MS: (c: AppConfig) => c.redis.connectTimeoutMs,
      WORKER_LOCK_DURATION_MS: (c: AppConfig) => c.worker.lockDurationMs,
      WORKER_STALLED_INTERVAL_MS: (c: AppConfig) => c.worker.stalledIntervalMs,
    };
    for (const [name, read] of Object.entries(ms)) {
      expect(() => loadConfig({ env: { [name]: String(2 ** 31) } }), name).toThrow(`invalid environment: ${name}: at most 2147483647 (about 24.8 days: a Node timer's longest wait)`);
      expect(read(loadConfig({ env: { [name]: String(2 ** 31 - 1) } })), name).toBe(2 ** 31 - 1);
    }
  });

  it('gives each setting places of its own in the config', () => {
    const places = Object.values(SETTINGS).flatMap((s) => (typeof s.at === 'string' ? [s.at] : [...s.at]));
    expect(new Set(places).size).toBe(places.length);
    for (const p of places) expect(places.filter((q) => q.startsWith(`${p}.`)), p).toEqual([]);
  });
});

describe('docs of the settings', () => {
  it('README and docs/jobs.md hold the tables written from the table (npm run docs:settings)', async () => {
    for (const file of SETTINGS_DOCS) {
      const doc = await fs.readFile(file, 'utf8');
      expect(doc, `${file} lags the settings table: npm run docs:settings`).toBe(withSettingsTables(doc));
    }
    const readme = await fs.readFile(SETTINGS_DOCS[0]!, 'utf8');
    for (const name of Object.keys(SETTINGS)) expect(readme).toContain(`| \`${name}\` |`);
  });
});

describe('the environment', () => {
  it('is read by lib/config.ts alone among the modules of the app', async () => {
    const folders = ['api', 'billing', 'cli', 'collector', 'config', 'jobs', 'lib', 'pilot', 'sdk', 'warehouse'];
    const readers: string[] = [];
    for (const folder of folders) {
      for (const file of await fs.readdir(path.join(PROJECT_ROOT, folder), { recursive: true })) {
        if (!file.endsWith('.ts')) continue;
        const rel = path.join(folder, file);
        if (rel !== path.join('lib', 'config.ts') && (await fs.readFile(path.join(PROJECT_ROOT, rel), 'utf8')).includes('process.env')) readers.push(rel);
      }
    }
    expect(readers).toEqual([]);
  });
});
