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
import { ResponseCache } from './response-cache.ts';
import { SnapshotSeries } from './timeseries.ts';
import { tokenSecret } from './tokens.ts';
import type { ApiDeps } from './deps.ts';
import { loadSigningKey } from '../warehouse/control/signing-key.ts';
import { platformConfigReader } from '../config/platform.ts';
import { PilotReports } from './pilot-reports.ts';

export interface RunningApi {
  url: string;
  server: http.Server;
  deps: ApiDeps;
  close(): Promise<void>;
}

export async function startApi(config: AppConfig, log: Logger): Promise<RunningApi> {
  const layout = warehouseLayout(config.warehouseDir);
  const spill = path.join(hostScratchDir(layout), `duckdb-${process.pid}`);
  // The API's DuckDB is sized on its own (API_DUCKDB_*): small reads, not the jobs' partitions.
  const db = await Db.open(config.api.duckdb, spill);
  // Snapshot files are immutable: their Parquet footers are parsed once, not on every read.
  await db.withSession((s) => s.run('SET GLOBAL parquet_metadata_cache = true'));
  const store = new SnapshotStore(db, layout, log, config.api.snapshotPollMs, new ResponseCache(config.api.caches.responsesBytes));
  await store.start();
  // Read through the stat-checked reader on every use: an edit applies without a restart, and the
  // pilot reports' fingerprints match those of the report job, which reads it the same way.
  const platform = platformConfigReader(config.platformConfigFile, (err) =>
    log.error({ err: err.message }, 'the platform configuration is invalid; keeping the last good one'),
  );
  platform.current(); // an invalid document at start is fatal, as before
  const deps: ApiDeps = {
    db,
    layout,
    config,
    log,
    store,
    series: new SnapshotSeries(db, config.api.caches.seriesBytes),
    onDemand: new OnDemandSeries(db, layout, config.api.queryTimeoutMs, config.api.caches.seriesBytes),
    secret: await tokenSecret(layout, config.tokenSecret),
    signingKey: await loadSigningKey(layout, config.manifestSigningKey),
    get platform() {
      return platform.current();
    },
    pilotReports: new PilotReports(db, layout, () => platform.current(), config.api.queryTimeoutMs, {
      bodiesBytes: config.api.caches.reportsBytes,
      composed: config.api.caches.composedReports,
    }),
  };
  const app = createApp(deps);
  const server = http.createServer(app.callback());
  // Slow or stalled clients do not hold the server: receiving a request has a deadline, and an
  // idle keep-alive connection is closed.
  server.requestTimeout = config.api.requestTimeoutMs;
  server.headersTimeout = Math.min(config.api.requestTimeoutMs, 20_000);
  server.keepAliveTimeout = 5_000;
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
