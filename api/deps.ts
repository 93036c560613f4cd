// What the API's routes share: the process's DuckDB, the warehouse, config, the snapshot store
// and the series readers and caches.
import type { AppConfig } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import type { Db } from '../warehouse/duckdb/index.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import type { OnDemandSeries } from './ondemand-series.ts';
import type { OnDemandBreakdowns } from '../served/ondemand-breakdowns.ts';
import type { PreviousPeriods } from './previous-period.ts';
import type { SnapshotSeries } from './timeseries.ts';
import type { SnapshotStore } from '../served/snapshot-store.ts';
import type { SigningKey } from '../control/signing-key.ts';
import type { PlatformConfig } from '../config/platform.ts';
import type { PilotReports } from './pilot-report-source.ts';
import type { Admission } from '../served/admission.ts';
import type { Revocation } from '../control/revocation.ts';
import type { Deliveries } from '../alerts/webhooks/delivery-queue.ts';

export interface ApiDeps {
  db: Db;
  layout: WarehouseLayout;
  config: AppConfig;
  log: Logger;
  store: SnapshotStore;
  /** Reads of the snapshot's precomputed series (standard sizes, billing's daily series). */
  series: SnapshotSeries;
  onDemand: OnDemandSeries;
  /** Breakdowns and filtered metrics, on demand from the snapshot's session classes. */
  breakdowns: OnDemandBreakdowns;
  /** The figures of the period before a window (`period=previous`), on demand from the raw files. */
  previous: PreviousPeriods;
  /** Signing secret of API tokens. */
  secret: Uint8Array;
  /** The manifest signing key; its public half is served at /manifest/public-key. */
  signingKey: SigningKey;
  /** The platform configuration document, as it is now (stat-checked on every read). */
  platform: PlatformConfig;
  /** Pilot reports: pre-rendered files or rendered on demand, kept per snapshot. */
  pilotReports: PilotReports;
  /** Exports running at once, globally and per tenant. */
  exports: Admission;
  /** The deny list and the tenant list, re-read every few seconds: what auth refuses. */
  revocation: Revocation;
  /** Webhook deliveries: on disk, sent by this process (alerts/webhooks/outbox.ts), or by the worker tier's queue (delivery-queue.ts). */
  outbox: Deliveries;
}
