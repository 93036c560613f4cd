// Pre-rendered pilot reports as a static site: for a snapshot, each customer gets a folder
//
//   reports/<snapshot>/<customerId>/
//     index.html                      the customer's reports, linked
//     streams/<name>.json|md|html     every stream's report in the three formats
//     streams/<name>.jws              its signed statement (the SHA-256 of the three; pilot/statement.ts)
//     reports.json                    what was rendered from what (snapshot, bucket, inputs fingerprint)
//
// with only relative links, so the folder can be copied to any static host. A folder is built in
// this host's scratch space and renamed into place whole: a reader (the API) sees the previous
// folder or the new one, never a half-written one. The API serves these files when the request
// and the inputs fingerprint match reports.json, and renders on demand otherwise.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { fsyncDir, fsyncTree } from '../lib/fsx.ts';
import { codeVersion } from '../lib/version.ts';
import { hostScratchDir, type WarehouseLayout } from '../warehouse/layout.ts';
import type { SnapshotManifest } from '../warehouse/snapshots/index.ts';
import { findTenant } from '../control/tenants.ts';
import { composeCustomerReports, inputsFingerprint, type PilotDeps, type SnapshotRef } from './service.ts';
import type { PilotReport } from './model.ts';
import type { Tenant } from '../control/tenants.ts';
import { quotedString } from '../warehouse/duckdb/index.ts';
import { publishedDir, snapshotFiles } from '../warehouse/snapshots/index.ts';
import { REPORT_FORMATS, renderReport, reportFileName, type ReportFormat, type ServedFormat } from './report-formats.ts';
import { claimsOfReport, signStatement } from './statement.ts';
import { currentReportKey, type ReportSigningKey } from '../control/report-keys.ts';
import { renderCustomerIndexHtml, type CustomerReportIndex } from './render.ts';

export const STREAMS_FOLDER = 'streams';
export const INDEX_FILE = 'index.html';
export const PUBLISHED_FILE = 'reports.json';

const PublishedReportsSchema = z.object({
  snapshot: z.string(),
  asOf: z.string(),
  customerId: z.string(),
  bucketSeconds: z.number().int(),
  /** inputsFingerprint(tenant, platform): the files are valid while it is unchanged. */
  fingerprint: z.string(),
  codeVersion: z.string(),
  renderedAt: z.string(),
  streams: z.array(
    z.object({
      streamId: z.string(),
      assessment: z.enum(['pass', 'review']),
      files: z.object({ json: z.string(), md: z.string(), html: z.string() }),
      /** The signed statement's path (folders of versions before signatures have none). */
      statement: z.string().optional(),
    }),
  ),
});
export type PublishedReports = z.infer<typeof PublishedReportsSchema>;

/** The snapshot's folder of pre-rendered reports. */
export function snapshotReportsDir(layout: WarehouseLayout, snapshotId: string): string {
  return path.join(layout.reports, snapshotId);
}

/** A customer's static site of pre-rendered reports for a snapshot. */
export function customerReportsDir(layout: WarehouseLayout, snapshotId: string, customerId: string): string {
  return path.join(snapshotReportsDir(layout, snapshotId), customerId);
}

/** A report's path inside its customer's folder, '/'-separated (it is also the index page's link). */
export function reportPath(streamId: string, format: ServedFormat): string {
  return `${STREAMS_FOLDER}/${reportFileName(streamId, format)}`;
}

/** What a customer's folder says about itself; null when there is none (or it is unreadable). */
export async function readPublishedReports(dir: string): Promise<PublishedReports | null> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, PUBLISHED_FILE), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = PublishedReportsSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** A stream (or a whole customer, streamId null) whose reports could not be rendered, and why. */
export interface ReportFailure {
  customerId: string;
  streamId: string | null;
  reason: string;
}

export interface CustomerPublication {
  customerId: string;
  dir: string;
  streams: number;
  /** Streams that could not be rendered: left out of the folder, which is rendered again next run. */
  failed: ReportFailure[];
  /** The folder already held these reports for the same inputs: nothing was rendered. */
  skipped: boolean;
  /** Time spent: figures (SQL and model) for all streams, and rendering each format (jws: signing). */
  ms: { figures: number; render: Record<ServedFormat | 'index', number>; write: number };
}

/**
 * Render every stream's report of a customer, in the three formats at the platform's default
 * bucket size, into the snapshot's report folder (skipped when the folder already holds them for
 * the same inputs, unless `force`).
 */
export async function publishCustomerReports(
  deps: PilotDeps,
  snap: SnapshotRef,
  customerId: string,
  opts: { force?: boolean } = {},
): Promise<CustomerPublication> {
  const bucketSeconds = deps.platform.pilot.defaultBucketSeconds;
  const dir = customerReportsDir(deps.layout, snap.id, customerId);
  const ms = { figures: 0, render: { json: 0, md: 0, html: 0, jws: 0, index: 0 }, write: 0 };
  const existing = opts.force ? null : await alreadyPublished(deps, snap, customerId, dir, bucketSeconds);
  if (existing) return { customerId, dir, streams: existing.streams.length, failed: [], skipped: true, ms };

  const failed: ReportFailure[] = [];
  let t = performance.now();
  const { reports, tenant } = await composeReports(deps, snap, customerId, bucketSeconds, failed);
  ms.figures = performance.now() - t;
  const { files, index } = await renderCustomerFiles(deps, snap, customerId, tenant, reports, failed, ms.render);
  const published = publishedRecord(deps, snap, customerId, bucketSeconds, tenant, index, failed);
  files.set(PUBLISHED_FILE, `${JSON.stringify(published, null, 2)}\n`);
  t = performance.now();
  await installFolder(deps.layout, dir, files);
  ms.write = performance.now() - t;
  return { customerId, dir, streams: index.reports.length, failed, skipped: false, ms };
}

/** The folder's record when it already holds this snapshot's reports for the same inputs. */
async function alreadyPublished(deps: PilotDeps, snap: SnapshotRef, customerId: string, dir: string, bucketSeconds: number): Promise<PublishedReports | null> {
  const existing = await readPublishedReports(dir);
  const fingerprint = inputsFingerprint(await findTenant(deps.layout, customerId), deps.platform);
  const same = existing && existing.snapshot === snap.id && existing.bucketSeconds === bucketSeconds && existing.fingerprint === fingerprint;
  return same ? existing : null;
}

type Composed = { reports: PilotReport[]; tenant: Tenant | null };

/** Every stream's report of the customer, composed together (or one by one when that fails). */
function composeReports(deps: PilotDeps, snap: SnapshotRef, customerId: string, bucketSeconds: number, failed: ReportFailure[]): Promise<Composed> {
  return composeCustomerReports(deps, snap, customerId, bucketSeconds, null).catch((err: unknown) =>
    composeStreamByStream(deps, snap, customerId, bucketSeconds, failed, err),
  );
}

/** One bad stream must not cost the customer's others: compose them one by one, noting failures. */
async function composeStreamByStream(
  deps: PilotDeps,
  snap: SnapshotRef,
  customerId: string,
  bucketSeconds: number,
  failed: ReportFailure[],
  err: unknown,
): Promise<Composed> {
  const streams = await customerStreams(deps, snap, customerId);
  const one: PilotReport[] = [];
  let tenantOf: Tenant | null = null;
  for (const streamId of streams) {
    try {
      const r = await composeCustomerReports(deps, snap, customerId, bucketSeconds, streamId);
      one.push(...r.reports);
      tenantOf = r.tenant;
    } catch (streamErr) {
      failed.push({ customerId, streamId, reason: errorLine(streamErr) });
    }
  }
  if (one.length === 0 && failed.length === streams.length && streams.length > 0) throw err;
  return { reports: one, tenant: tenantOf ?? (await findTenant(deps.layout, customerId)) };
}

/** Every stream's files and the customer's index page, by path; a stream that fails to render is left out. */
async function renderCustomerFiles(
  deps: PilotDeps,
  snap: SnapshotRef,
  customerId: string,
  tenant: Tenant | null,
  reports: readonly PilotReport[],
  failed: ReportFailure[],
  ms: Record<ServedFormat | 'index', number>,
): Promise<{ files: Map<string, string>; index: CustomerReportIndex }> {
  const files = new Map<string, string>();
  const index: CustomerReportIndex = { customerId, tenantName: tenant?.name ?? null, snapshot: { id: snap.id, asOf: snap.manifest.asOf }, reports: [] };
  const key = await currentReportKey(deps.layout);
  for (const report of reports) {
    try {
      for (const [k, v] of await renderStreamFiles(report, key, ms)) files.set(k, v);
    } catch (err) {
      failed.push({ customerId, streamId: report.streamId, reason: errorLine(err) });
      continue;
    }
    index.reports.push(indexEntry(report));
  }
  const t = performance.now();
  files.set(INDEX_FILE, renderCustomerIndexHtml(index));
  ms.index = performance.now() - t;
  return { files, index };
}

function indexEntry(report: PilotReport): CustomerReportIndex['reports'][number] {
  return {
    streamId: report.streamId,
    assessment: report.conclusion.assessment,
    sessions: report.results.sessions,
    offloadRatio: report.results.offloadRatio,
    netSavings: report.cost.netSavings,
    files: { json: reportPath(report.streamId, 'json'), md: reportPath(report.streamId, 'md'), html: reportPath(report.streamId, 'html') },
  };
}

/** What the folder says about itself (reports.json). */
function publishedRecord(
  deps: PilotDeps,
  snap: SnapshotRef,
  customerId: string,
  bucketSeconds: number,
  tenant: Tenant | null,
  index: CustomerReportIndex,
  failed: readonly ReportFailure[],
): PublishedReports {
  return {
    snapshot: snap.id,
    asOf: snap.manifest.asOf,
    customerId,
    bucketSeconds,
    // A folder with failed streams never matches: the next run (and the API) render it again.
    fingerprint: failed.length === 0 ? inputsFingerprint(tenant, deps.platform) : `incomplete-${randomBytes(4).toString('hex')}`,
    codeVersion: codeVersion(),
    renderedAt: new Date().toISOString(),
    streams: index.reports.map((r) => ({ streamId: r.streamId, assessment: r.assessment, files: r.files, statement: reportPath(r.streamId, 'jws') })),
  };
}

/**
 * A stream's report in the three formats and its statement signed over those exact bytes, by path
 * in the customer's folder; `ms` adds the time of each (jws: signing).
 */
async function renderStreamFiles(report: PilotReport, key: ReportSigningKey, ms: Record<ServedFormat, number>): Promise<Map<string, string>> {
  const bodies = {} as Record<ReportFormat, string>;
  const files = new Map<string, string>();
  for (const format of REPORT_FORMATS) {
    const t = performance.now();
    bodies[format] = renderReport(report, format);
    files.set(reportPath(report.streamId, format), bodies[format]);
    ms[format] += performance.now() - t;
  }
  const t = performance.now();
  files.set(reportPath(report.streamId, 'jws'), await signStatement(claimsOfReport(report), bodies, key));
  ms.jws += performance.now() - t;
  return files;
}

/** The customer's streams in the snapshot (from its stream summaries). */
async function customerStreams(deps: PilotDeps, snap: SnapshotRef, customerId: string): Promise<string[]> {
  const file = snapshotFiles(publishedDir(deps.layout, snap.id)).summaries(customerId);
  const rows = await deps.db.withSession((s) => s.all<{ streamId: string }>(`SELECT DISTINCT streamId FROM read_parquet(${quotedString(file)}) ORDER BY streamId`));
  return rows.map((r) => r.streamId);
}

/** An error as one line, for a failure summary. */
export function errorLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ').slice(0, 500);
}

/**
 * Write `files` into a fresh scratch folder, then rename it to `dir`, moving any previous folder
 * aside first (a directory cannot be renamed over a non-empty one) and removing it afterwards.
 */
async function installFolder(layout: WarehouseLayout, dir: string, files: Map<string, string>): Promise<void> {
  const scratch = path.join(hostScratchDir(layout), `reports-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    for (const [rel, body] of files) {
      const file = path.join(scratch, ...rel.split('/'));
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, body);
    }
    // Durable before it is renamed into place: a crash must not publish empty files.
    await fsyncTree(scratch);
    await fs.mkdir(path.dirname(dir), { recursive: true });
    // Two publishers of the same folder may race: each moves whatever is there aside and retries.
    for (let attempt = 0; ; attempt++) {
      const aside = path.join(path.dirname(dir), `.${path.basename(dir)}.old-${randomBytes(4).toString('hex')}`);
      const moved = await fs.rename(dir, aside).then(
        () => true,
        (err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return false;
          throw err;
        },
      );
      try {
        await fs.rename(scratch, dir);
        await fsyncDir(path.dirname(dir));
        if (moved) await fs.rm(aside, { recursive: true, force: true });
        return;
      } catch (err) {
        if (moved) await fs.rm(aside, { recursive: true, force: true });
        const code = (err as NodeJS.ErrnoException).code;
        if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || attempt >= 3) throw err;
      }
    }
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Remove folders that a killed report publisher left aside (`reports/<snapshot>/.<customer>.old-*`):
 * each is a previous copy of a customer's folder, dead once the new one is in place.
 */
export async function cleanReportLeftovers(layout: WarehouseLayout): Promise<string[]> {
  const removed: string[] = [];
  for (const snapshot of await fs.readdir(layout.reports).catch(() => [] as string[])) {
    const dir = path.join(layout.reports, snapshot);
    for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
      if (!/^\..+\.old-[0-9a-f]+$/.test(name)) continue;
      await fs.rm(path.join(dir, name), { recursive: true, force: true });
      removed.push(path.join(dir, name));
    }
  }
  return removed;
}

/**
 * A customer's published reports, newest first (snapshot ids begin with their time): each
 * snapshot folder holding its `reports.json`, and that folder. Pruning keeps the newest
 * (snapshot-folders.ts); a folder removed meanwhile is passed over.
 */
export async function* publishedReportsNewestFirst(layout: WarehouseLayout, customerId: string): AsyncGenerator<{ dir: string; published: PublishedReports }> {
  const folders = (await fs.readdir(layout.reports).catch(() => [] as string[])).filter((f) => !f.startsWith('.')).sort().reverse();
  for (const snapshotId of folders) {
    const dir = customerReportsDir(layout, snapshotId, customerId);
    const published = await readPublishedReports(dir);
    if (published) yield { dir, published };
  }
}

/** A customer's latest published reports and their folder; null when none was published. */
export async function latestPublishedReports(layout: WarehouseLayout, customerId: string): Promise<{ dir: string; published: PublishedReports } | null> {
  for await (const latest of publishedReportsNewestFirst(layout, customerId)) return latest;
  return null;
}

/** The customers whose partition in the snapshot read at least one file: those with reports, sorted. */
export function customersWithData(manifest: SnapshotManifest): string[] {
  return manifest.partitions
    .filter((p) => p.files.length > 0)
    .map((p) => p.customerId)
    .sort();
}

export interface SnapshotPublication {
  snapshot: string;
  customers: CustomerPublication[];
  /** Every stream or customer that could not be rendered (the others were). */
  failed: ReportFailure[];
}

/**
 * Publish the reports of every customer of the snapshot (or of those named), one customer after
 * the other; `onCustomer` hears of each as it is done (progress).
 */
export async function publishSnapshotReports(
  deps: PilotDeps,
  snap: SnapshotRef,
  opts: {
    customers?: readonly string[];
    force?: boolean;
    onCustomer?: (done: CustomerPublication, index: number, total: number) => void | Promise<void>;
    /** Hears of each stream or customer that could not be rendered (the run goes on). */
    onFailure?: (failure: ReportFailure) => void;
  } = {},
): Promise<SnapshotPublication> {
  const customers = opts.customers ? [...opts.customers] : customersWithData(snap.manifest);
  const out: CustomerPublication[] = [];
  const failed: ReportFailure[] = [];
  for (const [i, customerId] of customers.entries()) {
    let done: CustomerPublication;
    try {
      done = await publishCustomerReports(deps, snap, customerId, opts.force === undefined ? {} : { force: opts.force });
    } catch (err) {
      const failure = { customerId, streamId: null, reason: errorLine(err) };
      failed.push(failure);
      opts.onFailure?.(failure);
      continue;
    }
    for (const f of done.failed) opts.onFailure?.(f);
    failed.push(...done.failed);
    out.push(done);
    await opts.onCustomer?.(done, i, customers.length);
  }
  return { snapshot: snap.id, customers: out, failed };
}
