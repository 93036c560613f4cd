// Pilot reports of a published snapshot: a customer's (or one stream's) figures through the shared
// SQL, the tenant's rates from the control area and the platform configuration, composed by the
// model. Used on demand by the API and in bulk by the nightly report run.
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { Db } from '../warehouse/duckdb/index.ts';
import type { DbSession } from '../warehouse/duckdb/index.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import type { SnapshotManifest } from '../warehouse/snapshots/index.ts';
import { findTenant, type Tenant } from '../control/tenants.ts';
import type { PlatformConfig } from '../config/platform.ts';
import { codeVersion } from '../lib/version.ts';
import { loadPilotFigures, type StreamPilotFigures } from './figures.ts';
import { composePilotReport, REPORT_VERSION, type PilotReport } from './model.ts';

export interface PilotDeps {
  db: Db;
  layout: WarehouseLayout;
  platform: PlatformConfig;
}

export interface SnapshotRef {
  id: string;
  manifest: SnapshotManifest;
}

/**
 * What a report depends on besides the snapshot: the tenant's name and rates, the platform
 * configuration and the code. A pre-rendered report is served only while this is unchanged.
 */
export function inputsFingerprint(tenant: Tenant | null, platform: PlatformConfig): string {
  // Computed once per tenant and configuration object: the API asks on every request, and the
  // tenants it gets are the same objects until the document changes.
  let memo = fingerprints.get(platform);
  if (!memo) {
    memo = { none: null, byTenant: new WeakMap() };
    fingerprints.set(platform, memo);
  }
  const hit = tenant ? memo.byTenant.get(tenant) : memo.none;
  if (hit) return hit;
  const fingerprint = computeFingerprint(tenant, platform);
  if (tenant) memo.byTenant.set(tenant, fingerprint);
  else memo.none = fingerprint;
  return fingerprint;
}

const fingerprints = new WeakMap<PlatformConfig, { none: string | null; byTenant: WeakMap<Tenant, string> }>();

function computeFingerprint(tenant: Tenant | null, platform: PlatformConfig): string {
  const inputs = {
    reportVersion: REPORT_VERSION,
    code: codeVersion(),
    tenant: tenant && { id: tenant.id, name: tenant.name, cdnPricePerGb: tenant.cdnPricePerGb, savingsSharePct: tenant.savingsSharePct },
    billing: platform.billing,
    live: platform.live,
    pilot: platform.pilot,
  };
  return createHash('sha256').update(JSON.stringify(inputs)).digest('base64url').slice(0, 22);
}

/** The pilot reports of a customer's streams (or of one stream), in stream order. */
export async function composeCustomerReports(
  deps: PilotDeps,
  snap: SnapshotRef,
  customerId: string,
  bucketSeconds: number,
  streamId: string | null,
  run: (fn: (s: DbSession) => Promise<void>) => Promise<void> = (fn) => deps.db.withSession(fn),
): Promise<{ reports: PilotReport[]; tenant: Tenant | null }> {
  const partition = snap.manifest.partitions.find((p) => p.customerId === customerId);
  const tenant = await findTenant(deps.layout, customerId);
  if (!partition || partition.files.length === 0) return { reports: [], tenant };
  const inputs = { files: partition.files.map((f) => path.join(deps.layout.rawReports, f.path)), presentColumns: partition.presentColumns };
  let figures = new Map<string, StreamPilotFigures>();
  await run(async (s) => {
    figures = await loadPilotFigures(s, inputs, streamId, new Date(snap.manifest.asOf), bucketSeconds);
  });
  const reports = [...figures.keys()].sort().map((id) =>
    composePilotReport({
      streamId: id,
      snapshot: { id: snap.id, asOf: snap.manifest.asOf },
      bucketSeconds,
      figures: figures.get(id)!,
      tenant: tenant && { id: tenant.id, name: tenant.name, cdnPricePerGb: tenant.cdnPricePerGb, savingsSharePct: tenant.savingsSharePct },
      platform: deps.platform,
    }),
  );
  return { reports, tenant };
}

/** The JSON form, byte for byte the same whether pre-rendered or rendered on demand. */
export function reportJson(report: PilotReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
