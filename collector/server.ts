// Starting and stopping a collector: its own spool folder (replayed at start), its flusher, its own
// DuckDB for landing, Node's HTTP timeouts, and a close that stops taking requests, lands everything
// the spool holds, and only then lets go.
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { Db } from '../warehouse/duckdb/index.ts';
import { hostScratchDir, warehouseLayout, type WarehouseLayout } from '../warehouse/layout.ts';
import { IngestKeyChecker } from '../control/ingest-keys.ts';
import { Revocation } from '../control/revocation.ts';
import { Spool } from './spool.ts';
import { Flusher } from './flusher.ts';
import { keyFailureLimiter, reportLimiter, WorkBudgets } from './limits.ts';
import { BatchPool } from './batch-pool.ts';
import { createCollectorApp } from './app.ts';
import { watchSpool } from './metrics.ts';
import { collectProcessMetrics, listenMetrics, type MetricsListener } from '../lib/metrics.ts';
import type { CollectorDeps } from './deps.ts';

export interface RunningCollector {
  url: string;
  /** GET /metrics of this collector, when it serves them (COLLECTOR_METRICS_PORT). */
  metricsUrl: string | null;
  server: http.Server;
  deps: CollectorDeps;
  /** Seal the spool and land everything it holds now. */
  flush(): Promise<void>;
  /** Stop taking requests, land everything, release the spool. */
  close(): Promise<void>;
}

/** This collector's spool folder: configured, else one per host and port under <warehouse>/spool/. */
export function defaultSpoolDir(layout: WarehouseLayout, port: number): string {
  return path.join(layout.root, 'spool', `${os.hostname().replace(/[^A-Za-z0-9._-]/g, '_')}-${port}`);
}

export async function startCollector(config: AppConfig, log: Logger, opts: { now?: () => number } = {}): Promise<RunningCollector> {
  const parts = await openParts(config, log);
  const deps = collectorDeps(config, log, parts, opts.now ?? Date.now);
  parts.flusher.start(); // lands what an earlier run left first
  // No request before the batch workers can check it (each loads its code in a few hundred ms).
  await deps.batches.started();
  const { server, url } = await listen(deps);
  const metrics = await listenCollectorMetrics(config.collector);
  log.info({ url, spool: parts.spoolDir, spoolId: parts.spool.id, batchWorkers: deps.batches.size, metrics: metrics?.url ?? null }, 'collector listening');
  let closing: Promise<void> | null = null;
  return {
    url,
    metricsUrl: metrics?.url ?? null,
    server,
    deps,
    flush: () => parts.flusher.flushAll(),
    close() {
      closing ??= stopCollector(server, deps, parts, metrics);
      return closing;
    },
  };
}

/** What a collector opens before it listens, and closes after. */
interface CollectorParts {
  layout: WarehouseLayout;
  revocation: Revocation;
  spoolDir: string;
  spool: Spool;
  unwatchSpool: () => void;
  /** The landing DuckDB's spill folder. */
  spill: string;
  db: Db;
  flusher: Flusher;
}

async function openParts(config: AppConfig, log: Logger): Promise<CollectorParts> {
  const c = config.collector;
  const layout = warehouseLayout(config.warehouseDir);
  // Which customers still have a tenant: the API's revocation state, on the same poll period (read
  // first: a control document that cannot be read stops the start before anything is opened).
  const revocation = await Revocation.start(layout, c.revocationPollMs, log);
  const spoolDir = c.spoolDir ?? defaultSpoolDir(layout, c.port);
  const spool = await Spool.open(spoolDir, log);
  const unwatchSpool = watchSpool(spool);
  const spill = path.join(hostScratchDir(layout), `duckdb-${process.pid}`);
  // Landing is one COPY at a time on one DuckDB thread: the other cores stay with the HTTP work,
  // which is what acknowledgements wait for (a segment of 200,000 reports lands in seconds).
  // Its memory is bounded on its own (COLLECTOR_DUCKDB_MEMORY_LIMIT): the jobs' limit is sized for
  // whole partitions, far more than landing a segment needs.
  const db = await Db.open({ ...config.duckdb, threads: 1, maxConcurrent: 1, memoryLimit: c.duckdbMemoryLimit }, spill);
  const flusher = new Flusher(spool, db, layout, { intervalMs: c.flushIntervalMs, reports: c.flushReports }, log);
  return { layout, revocation, spoolDir, spool, unwatchSpool, spill, db, flusher };
}

function collectorDeps(config: AppConfig, log: Logger, parts: CollectorParts, now: () => number): CollectorDeps {
  const c = config.collector;
  return {
    config: c,
    log,
    layout: parts.layout,
    spool: parts.spool,
    flusher: parts.flusher,
    keys: new IngestKeyChecker(parts.layout, c.revocationPollMs, parts.revocation, log),
    limiter: reportLimiter(c.rateLimitPerKey, c.maxReports),
    budgets: new WorkBudgets(c),
    keyFailures: keyFailureLimiter(c.keyFailuresPerAddress),
    batches: new BatchPool(c.workers, { maxInflatedBytes: c.maxInflatedBytes, maxReports: c.maxReports, maxCheckMs: c.maxCheckMs }, log),
    now,
  };
}

/** The ingest server, with Node's HTTP timeouts, listening; its URL. */
async function listen(deps: CollectorDeps): Promise<{ server: http.Server; url: string }> {
  const c = deps.config;
  // Timeouts are checked every connectionsCheckingInterval (30 s by default): check often.
  const server = http.createServer({ connectionsCheckingInterval: 2_000 }, createCollectorApp(deps).callback());
  server.requestTimeout = c.requestTimeoutMs;
  server.headersTimeout = Math.min(c.requestTimeoutMs, 20_000);
  server.keepAliveTimeout = 65_000; // SDKs post every few seconds: keep their connections
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(c.port, c.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return { server, url: `http://${host}:${addr.port}` };
}

/**
 * Metrics on a listener of their own (COLLECTOR_METRICS_PORT, `collect --metrics-port`): the
 * ingest port is public, its metrics are not.
 */
async function listenCollectorMetrics(c: AppConfig['collector']): Promise<MetricsListener | null> {
  if (!c.metrics) return null;
  collectProcessMetrics();
  return listenMetrics(c.metrics.port, c.metrics.host);
}

/** Stop taking requests, land everything the spool holds, then let go of the rest. */
async function stopCollector(server: http.Server, deps: CollectorDeps, parts: CollectorParts, metrics: MetricsListener | null): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 5_000).unref();
  });
  await deps.batches.close();
  parts.flusher.stop();
  parts.revocation.stop();
  try {
    await parts.flusher.flushAll();
  } catch (err) {
    // What could not be landed stays in the spool for the next start.
    deps.log.error({ err }, 'collector: could not land everything before stopping');
  }
  await metrics?.close();
  await parts.spool.close();
  parts.unwatchSpool();
  parts.db.close();
  await fs.rm(parts.spill, { recursive: true, force: true });
  deps.log.info('collector stopped');
}
