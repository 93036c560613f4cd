// Starting and stopping the API server: its own DuckDB, the snapshot store following CURRENT, the
// signing secret, Node's HTTP timeouts, and a graceful close.
import http from 'node:http';
import path from 'node:path';
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { Db } from '../warehouse/duckdb/index.ts';
import { hostScratchDir, warehouseLayout } from '../warehouse/layout.ts';
import { createApp, type ApiPages } from './app.ts';
import { OnDemandSeries } from './ondemand-series.ts';
import { PreviousPeriods } from './previous-period.ts';
import { OnDemandBreakdowns } from '../served/ondemand-breakdowns.ts';
import { answerClientError } from './client-errors.ts';
import { SnapshotStore } from '../served/snapshot-store.ts';
import { ResponseCache } from '../served/response-cache.ts';
import { SnapshotSeries } from './timeseries.ts';
import { tokenSecret } from './tokens.ts';
import type { ApiDeps } from './deps.ts';
import { WebhookOutbox } from '../alerts/webhooks/outbox.ts';
import type { Deliveries } from '../alerts/webhooks/delivery-queue.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { loadSigningKey } from '../control/signing-key.ts';
import { platformConfigReader } from '../config/platform.ts';
import { PilotReports } from './pilot-report-source.ts';
import { bindApiMetrics } from './metrics.ts';
import { collectProcessMetrics, listenMetrics, type MetricsListener } from '../lib/metrics.ts';
import { Admission } from '../served/admission.ts';
import { prepareExportScratch } from './export/scratch.ts';
import { Revocation } from '../control/revocation.ts';
import { secureControlArea } from '../control/documents.ts';
import { currentReportKey } from '../control/report-keys.ts';

export interface RunningApi<P extends ApiPages | null = null> {
  url: string;
  /** The token-less /metrics listener, when configured (config.api.metrics). */
  metricsUrl: string | null;
  server: http.Server;
  deps: ApiDeps;
  /** The pages served beside the JSON routes (the portal, docs/portal.md), when the caller gave them. */
  pages: P;
  close(): Promise<void>;
}

export interface StartApiOptions<P extends ApiPages | null> {
  /** Who sends webhooks (default WEBHOOK_DELIVERIES); `start` has no Redis: its outbox. */
  deliveries?: AppConfig['alerts']['deliveries'];
  /**
   * Makes the pages served beside the JSON routes (the portal) from the API's own parts: the
   * caller composes them, so that the API imports nothing of the portal.
   */
  pages?: (deps: ApiDeps) => P;
}

export async function startApi<P extends ApiPages | null = null>(config: AppConfig, log: Logger, opts: StartApiOptions<P> = {}): Promise<RunningApi<P>> {
  const layout = warehouseLayout(config.warehouseDir);
  const spill = path.join(hostScratchDir(layout), `duckdb-${process.pid}`);
  // The API's DuckDB is sized on its own (API_DUCKDB_*): small reads, not the jobs' partitions.
  // Exports run in their own DuckDB slots; a request's work waits in a bounded queue (503 beyond).
  // DuckDB's parquet_metadata_cache stays off: it would keep a descriptor open for every Parquet
  // file the process ever read, a count that grows with history (docs/api.md).
  const db = await Db.open(config.api.duckdb, spill, { exportSlots: config.api.exports.duckdbSlots, maxQueued: config.api.duckdbMaxQueued });
  await prepareWarehouse(layout, log);
  const { deps, closeQueueClient } = await apiDeps(config, log, layout, db, opts.deliveries ?? config.alerts.deliveries);
  deps.outbox.start();
  collectProcessMetrics();
  bindApiMetrics(deps.store, db);
  const pages = (opts.pages?.(deps) ?? null) as P;
  const server = httpServer(config, createApp(deps, pages).listener);
  const url = await listen(server, config.api.port, config.api.host);
  pages?.listening(url);
  const metrics: MetricsListener | null = config.api.metrics ? await listenMetrics(config.api.metrics.port, config.api.metrics.host) : null;
  log.info({ url, metrics: metrics?.url ?? null, snapshot: deps.store.current()?.id ?? null }, 'API listening');
  const close = async () => {
    deps.store.stop();
    await metrics?.close();
    deps.revocation.stop();
    await deps.outbox.stop();
    await closeQueueClient();
    await closeServer(server);
    db.close();
    await fs.rm(spill, { recursive: true, force: true });
  };
  return { url, metricsUrl: metrics?.url ?? null, server, deps, pages, close };
}

/** The control area private, a report-signing key from the start (the JWK Set is never empty), dead exports' scratch gone. */
async function prepareWarehouse(layout: WarehouseLayout, log: Logger): Promise<void> {
  await secureControlArea(layout.control);
  await currentReportKey(layout);
  const removed = await prepareExportScratch(layout);
  if (removed.length > 0) log.info({ files: removed.length }, 'removed export scratch files of processes that no longer run');
}

/** The API's parts: the snapshot store (started), caches, on-demand work, keys, revocation, deliveries. */
async function apiDeps(
  config: AppConfig,
  log: Logger,
  layout: WarehouseLayout,
  db: Db,
  deliveries: 'outbox' | 'queue',
): Promise<{ deps: ApiDeps; closeQueueClient: () => Promise<void> }> {
  const store = new SnapshotStore(db, layout, log, config.api.snapshotPollMs, new ResponseCache(config.api.caches.responsesBytes, config.api.memoryTargetBytes));
  await store.start();
  // Read through the stat-checked reader on every use: an edit applies without a restart, and the
  // pilot reports' fingerprints match those of the report job, which reads it the same way.
  const platform = platformConfigReader(config.platformConfigFile, (err) =>
    log.error({ err: err.message }, 'the platform configuration is invalid; keeping the last good one'),
  );
  platform.current(); // an invalid document at start is fatal
  let closeQueueClient = async (): Promise<void> => {};
  const deps: ApiDeps = {
    db,
    layout,
    config,
    log,
    store,
    series: new SnapshotSeries(db, config.api.caches.seriesBytes),
    onDemand: new OnDemandSeries(db, layout, config.api.queryTimeoutMs, config.api.onDemand, config.api.caches.seriesBytes),
    breakdowns: new OnDemandBreakdowns(db, config.api.queryTimeoutMs, config.api.onDemand),
    previous: new PreviousPeriods(db, layout, config.api.queryTimeoutMs, config.api.onDemand),
    secret: await tokenSecret(layout, config.tokenSecret),
    signingKey: await loadSigningKey(layout, config.manifestSigningKey),
    get platform() {
      return platform.current();
    },
    pilotReports: new PilotReports(db, layout, () => platform.current(), config.api.queryTimeoutMs, {
      bodiesBytes: config.api.caches.reportsBytes,
      composed: config.api.caches.composedReports,
    }),
    exports: new Admission(config.api.exports.max, config.api.exports.perTenant),
    revocation: await Revocation.start(layout, config.api.revocationPollMs, log),
    outbox: await deliveriesOf(config, layout, log, deliveries, (close) => (closeQueueClient = close)),
  };
  return { deps, closeQueueClient: () => closeQueueClient() };
}

/**
 * The HTTP server: slow or stalled clients do not hold it (receiving a request has a deadline,
 * checked twice a second: Node checks every 30 s by default, so a deadline acted up to 30 s late),
 * and an idle keep-alive connection is closed.
 */
function httpServer(config: AppConfig, listener: http.RequestListener): http.Server {
  const server = http.createServer({ connectionsCheckingInterval: 500 }, listener);
  server.requestTimeout = config.api.requestTimeoutMs;
  server.headersTimeout = Math.min(config.api.requestTimeoutMs, config.api.headersTimeoutMs);
  server.keepAliveTimeout = 5_000;
  server.maxConnections = config.api.maxConnections;
  server.on('clientError', answerClientError);
  return server;
}

/** Listen on port and host; the URL it answers on. */
async function listen(server: http.Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
}

/** Close the server: idle connections at once, the others once their answer is sent, all after 5 s. */
function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 5_000).unref();
  });
}

/**
 * The outbox of this process, or the worker tier's queue (on a Redis connection of its own; BullMQ
 * and ioredis are loaded only then: `start`, which has no Redis, never loads them).
 */
async function deliveriesOf(config: AppConfig, layout: WarehouseLayout, log: Logger, kind: 'outbox' | 'queue', onClose: (close: () => Promise<void>) => void): Promise<Deliveries> {
  const opts = { timeoutMs: config.alerts.deliveryTimeoutMs, allowPrivate: config.alerts.allowPrivateTargets, retryForMs: config.alerts.retryForMs };
  if (kind === 'outbox') return new WebhookOutbox(layout, opts, log);
  const [{ WebhookQueue }, { closeRedis, redisClient }] = await Promise.all([import('../alerts/webhooks/delivery-queue.ts'), import('../jobs/queue/connection.ts')]);
  const client = redisClient(config.redis, 'service', log);
  onClose(() => closeRedis(client));
  return WebhookQueue.open(layout, opts, client, config.redis.prefix, log);
}
