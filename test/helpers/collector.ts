// A real collector on a loopback port over a temporary warehouse, with tenants and ingest keys, and
// helpers to post bodies and to read what landed.
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { loadConfig, type AppConfig } from '../../lib/config.ts';
import { silentLogger, type Logger } from '../../lib/log.ts';
import { startCollector, type RunningCollector } from '../../collector/server.ts';
import { addTenant, type Tenant } from '../../control/tenants.ts';
import { addIngestKey } from '../../control/ingest-keys.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { checkBatchSync } from '../../collector/batch.ts';
import { listFiles } from '../../lib/fsx.ts';
import { openTestWarehouse, type TestWarehouse } from './warehouse.ts';
import { readTestResponse } from './api.ts';
import type { TestResponse } from './api.ts';

export interface TestCollector {
  wh: TestWarehouse;
  collector: RunningCollector;
  url: string;
  spoolDir: string;
  tenants: Record<string, Tenant>;
  keys: Record<string, string>;
  post(body: string | Buffer, init?: { key?: string | null; headers?: Record<string, string>; query?: string; method?: string }): Promise<TestResponse>;
  /** Every landed report: reportId and streamId, from the Parquet files of the landing area. */
  landed(): Promise<{ reportId: string; streamId: string }[]>;
  close(): Promise<void>;
}

export function collectorConfig(root: string, spoolDir: string, env: Record<string, string> = {}): AppConfig {
  return loadConfig({
    overrides: { WAREHOUSE_DIR: root, COLLECTOR_PORT: 0, COLLECTOR_HOST: '127.0.0.1', COLLECTOR_SPOOL_DIR: spoolDir },
    env: { DUCKDB_THREADS: '1', DUCKDB_MEMORY_LIMIT: '1GB', COLLECTOR_FLUSH_SECONDS: '3600', ...env },
  });
}

export async function startTestCollector(
  opts: { env?: Record<string, string>; log?: Logger; customers?: string[]; warehouse?: TestWarehouse; spoolDir?: string } = {},
): Promise<TestCollector> {
  const wh = opts.warehouse ?? (await openTestWarehouse());
  const tenants: Record<string, Tenant> = {};
  const keys: Record<string, string> = {};
  for (const customerId of opts.customers ?? ['acme', 'globex']) {
    tenants[customerId] = await addTenant(wh.layout, { customerId, name: customerId.toUpperCase(), cdnPricePerGb: null, savingsSharePct: 25 });
    keys[customerId] = (await addIngestKey(wh.layout, { customer: customerId })).key;
  }
  const spoolDir = opts.spoolDir ?? path.join(wh.root, 'spool', 'test');
  const collector = await startCollector(collectorConfig(wh.root, spoolDir, opts.env), opts.log ?? silentLogger);

  async function post(
    body: string | Buffer,
    init: { key?: string | null; headers?: Record<string, string>; query?: string; method?: string } = {},
  ): Promise<TestResponse> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', ...(init.headers ?? {}) };
    const key = init.key === undefined ? keys['acme']! : init.key;
    if (key !== null) headers['X-Ingest-Key'] = key;
    const res = await fetch(`${collector.url}/v1/session-reports${init.query ?? ''}`, {
      method: init.method ?? 'POST',
      headers,
      ...(init.method === 'GET' || init.method === 'OPTIONS' ? {} : { body }),
    });
    return readTestResponse(res);
  }

  return {
    wh,
    collector,
    url: collector.url,
    spoolDir,
    tenants,
    keys,
    post,
    async landed() {
      const files = await listFiles(wh.layout.rawReports, '.parquet');
      if (files.length === 0) return [];
      return wh.db.withSession((s) =>
        s.all<{ reportId: string; streamId: string }>(
          `SELECT reportId, streamId FROM read_parquet([${files.map((f) => quotedString(f)).join(', ')}]) ORDER BY reportId`,
        ),
      );
    },
    async close() {
      await collector.close();
      await wh.close();
    },
  };
}

/** A valid report of `streamId` at `ts`, every column filled. */
export function sampleReport(streamId: string, ts: Date, n = 0, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    reportId: `rep-${streamId}-${ts.getTime()}-${n}`,
    sessionId: `sess-${n % 7}`,
    viewerId: `v-${n % 5}`,
    streamId,
    ts: ts.toISOString(),
    intervalMs: 30_000,
    seq: n,
    final: false,
    cohort: 'p2p',
    contentType: 'live',
    bytesOffloaded: 1_000_000 + n,
    bytesFallback: 250_000,
    bytesUploaded: 500_000,
    peerCount: 4,
    bufferHealth: 12.5,
    stallCount: 0,
    stallMs: 0,
    watchMs: 30_000,
    startupMs: n === 0 ? 850 : null,
    bitrateKbps: 3000,
    p2pConnAttempts: 2,
    p2pConnSuccesses: 2,
    signalingErrors: 0,
    validationFailures: 0,
    busyPeerEvents: 0,
    fallbackReasons: { no_peers: 1 },
    deliveryMode: 'hybrid',
    bytesByPath: { webrtc: 1_000_000 + n, http: 250_000 },
    device: 'desktop',
    region: 'eu-west',
    sdkVersion: '3.2.1',
    signalingVersion: '1.9.2',
    ...overrides,
  };
}

export const gzip = (s: string | Buffer): Buffer => gzipSync(s);

/**
 * Spool lines of `reports` (customer acme) as the collector writes them: checked by the batch
 * check with a window of 35 days before now to 10 minutes after; throws if any is refused.
 */
export function spoolLines(reports: readonly Record<string, unknown>[]): Buffer {
  const now = Date.now();
  const window = { latestMs: now + 600_000, earliestMs: now - 35 * 86_400_000 };
  const outcome = checkBatchSync(Buffer.from(JSON.stringify(reports)), { gzip: false, ndjson: false, customerId: 'acme', window }, { maxInflatedBytes: 2 ** 22, maxReports: Math.max(1, reports.length) });
  if (!outcome.ok || outcome.accepted !== reports.length) throw new Error('the sample reports were refused');
  return Buffer.from(outcome.lines);
}
