// Starting and stopping the API server: its own DuckDB, the snapshot store following CURRENT, the
// signing secret, Node's HTTP timeouts, and a graceful close.
import http from 'node:http';
import path from 'node:path';
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { Db } from '../warehouse/duckdb.ts';
import { hostScratchDir, warehouseLayout } from '../warehouse/layout.ts';
import { createApp } from './app.ts';
import { OnDemandSeries } from './ondemand-series.ts';
import { SnapshotStore } from './snapshot-store.ts';
import { tokenSecret } from './tokens.ts';
import type { ApiDeps } from './deps.ts';
import { loadSigningKey } from '../warehouse/control/signing-key.ts';
import { loadPlatformConfig } from '../config/platform.ts';
import { PilotReports } from './pilot-reports.ts';
import { Admission } from './admission.ts';
import { prepareExportScratch } from './export/scratch.ts';
import { Revocation } from '../warehouse/control/revocation.ts';
import { secureControlArea } from '../warehouse/control/documents.ts';

export interface RunningApi {
  url: string;
  server: http.Server;
  deps: ApiDeps;
  close(): Promise<void>;
}

export async function startApi(config: AppConfig, log: Logger): Promise<RunningApi> {
  const layout = warehouseLayout(config.warehouseDir);
  const spill = path.join(hostScratchDir(layout), `duckdb-${process.pid}`);
  // Exports run in their own DuckDB slots; a request's work waits in a bounded queue (503 beyond).
  const db = await Db.open(config.duckdb, spill, { exportSlots: config.api.exports.duckdbSlots, maxQueued: config.api.duckdbMaxQueued });
  await secureControlArea(layout.control);
  const removed = await prepareExportScratch(layout);
  if (removed.length > 0) log.info({ files: removed.length }, 'removed export scratch files of processes that no longer run');
  const store = new SnapshotStore(db, layout, log, config.api.snapshotPollMs);
  await store.start();
  const platform = loadPlatformConfig(config.platformConfigFile);
  const deps: ApiDeps = {
    db,
    layout,
    config,
    log,
    store,
    onDemand: new OnDemandSeries(db, layout, config.api.queryTimeoutMs, config.api.onDemand),
    secret: await tokenSecret(layout, config.tokenSecret),
    signingKey: await loadSigningKey(layout, config.manifestSigningKey),
    platform,
    pilotReports: new PilotReports(db, layout, platform, config.api.queryTimeoutMs),
    exports: new Admission(config.api.exports.max, config.api.exports.perTenant),
    revocation: await Revocation.start(layout, config.api.revocationPollMs, log),
  };
  const app = createApp(deps);
  // Slow or stalled clients do not hold the server: receiving a request has a deadline, checked
  // twice a second (Node checks every 30 s by default, so a deadline acted up to 30 s late), and
  // an idle keep-alive connection is closed.
  const server = http.createServer({ connectionsCheckingInterval: 500 }, app.callback());
  server.requestTimeout = config.api.requestTimeoutMs;
  server.headersTimeout = Math.min(config.api.requestTimeoutMs, config.api.headersTimeoutMs);
  server.keepAliveTimeout = 5_000;
  server.maxConnections = config.api.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.api.port, config.api.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  log.info({ url, snapshot: store.current()?.id ?? null }, 'API listening');
  return {
    url,
    server,
    deps,
    async close() {
      store.stop();
      deps.revocation.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 5_000).unref();
      });
      db.close();
      await fs.rm(spill, { recursive: true, force: true });
    },
  };
}
