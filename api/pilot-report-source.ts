// Pilot reports as the API serves them: the pre-rendered file of the nightly run when one matches
// the request (snapshot, bucket size, inputs fingerprint), rendered on demand otherwise. Both go
// through the same renderer, so the bytes are the same either way; the first answer is kept in
// memory for the snapshot, and concurrent requests for the same report share one computation,
// which is cancelled (its DuckDB work interrupted) when the last request waiting for it has gone.
// The signed statement (jws) is the nightly run's file too when it matches, and otherwise is signed
// here over the very bytes this process serves for the three formats of the same request. The
// latest published report of a stream (`source=published`) is its newest nightly file as written.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { LRUCache } from 'lru-cache';
import type { Db } from '../warehouse/duckdb/index.ts';
import { QueryTimeout } from '../warehouse/duckdb/index.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { findTenant } from '../control/tenants.ts';
import { parseStreamId } from '../warehouse/ids.ts';
import type { PlatformConfig } from '../config/platform.ts';
import type { PilotReport } from '../pilot/model.ts';
import { composeCustomerReports, inputsFingerprint } from '../pilot/service.ts';
import { REPORT_FORMATS, renderReport, type ReportFormat, type ServedFormat } from '../pilot/report-formats.ts';
import { claimsOfJson, signStatement } from '../pilot/statement.ts';
import { currentReportKey } from '../control/report-keys.ts';
import { customerReportsDir, publishedReportsNewestFirst, readPublishedReports, reportPath } from '../pilot/publish.ts';
import { problems } from '../served/problems.ts';
import { snapshotEtag } from './http-cache.ts';
import { SharedWork } from '../served/shared-work.ts';
import type { ServedSnapshot } from '../served/snapshot-store.ts';

export type ReportSource = 'prerendered' | 'rendered';

export interface ServedReport {
  body: Buffer;
  etag: string;
  /** Where the bytes came from when they were first asked for. */
  source: ReportSource;
}

/** A report as a nightly run published it (`source=published`). */
export interface PublishedReport {
  body: Buffer;
  etag: string;
  /** The snapshot it was rendered at, its asOf, and when it was rendered. */
  snapshot: string;
  asOf: string;
  renderedAt: string;
}

/** One request for a report, with the fingerprint of the inputs it was asked under. */
interface ReportRequest {
  snap: ServedSnapshot;
  customerId: string;
  streamId: string;
  bucketSeconds: number;
  format: ServedFormat;
  /** The platform configuration the request is served under (read once per request). */
  platform: PlatformConfig;
  fingerprint: string;
}

const composedKey = (r: ReportRequest) => `${r.snap.id}|${r.streamId}|${r.bucketSeconds}|${r.fingerprint}`;

interface Composed {
  report: PilotReport;
  /** The fingerprint of the inputs it was composed from. */
  fingerprint: string;
}

export class PilotReports {
  /** Bodies by snapshot, stream, bucket size, format and inputs fingerprint. */
  private readonly bodies: LRUCache<string, ServedReport>;
  private readonly pending = new SharedWork<ServedReport>();
  /** Composed reports, so that asking for another format of one report does not run the SQL again. */
  private readonly composed: LRUCache<string, Composed>;
  private readonly composing = new SharedWork<Composed>();

  constructor(
    private readonly db: Db,
    private readonly layout: WarehouseLayout,
    /** The platform configuration as it is now (an edit changes the fingerprint, so the key). */
    private readonly platform: () => PlatformConfig,
    private readonly timeoutMs: number,
    /** Bounds (API_REPORT_CACHE_MB, API_REPORT_COMPOSED_MAX). */
    caches: { bodiesBytes: number; composed: number } = { bodiesBytes: 32 * 2 ** 20, composed: 8 },
  ) {
    this.bodies = new LRUCache({ maxSize: Math.max(1, caches.bodiesBytes), sizeCalculation: (r) => r.body.length + 64 });
    this.composed = new LRUCache({ max: Math.max(1, caches.composed) });
  }

  /** Reports being produced (for tests and metrics). */
  get inProgress(): number {
    return this.pending.size + this.composing.size;
  }

  /** The report; `signal` aborts when the request's client has gone (its wait ends, and the work if no one else waits). */
  async get(snap: ServedSnapshot, streamId: string, bucketSeconds: number, format: ServedFormat, signal: AbortSignal): Promise<ServedReport> {
    const customerId = parseStreamId(streamId)?.customerId;
    if (!customerId) throw problems.streamNotFound();
    // The tenant's name and rates are inputs of the report: read them on every request, so that a
    // change of rates is seen at once (the fingerprint changes, and so do the key and the ETag).
    const platform = this.platform();
    const fingerprint = inputsFingerprint(await findTenant(this.layout, customerId), platform);
    return this.served({ snap, customerId, streamId, bucketSeconds, format, platform, fingerprint }, signal);
  }

  private async served(req: ReportRequest, signal: AbortSignal): Promise<ServedReport> {
    // A statement is also keyed by the key that signs now: after a rotation, new ones (and a new ETag).
    const signer = req.format === 'jws' ? `|${(await currentReportKey(this.layout)).kid}` : '';
    const key = `${req.snap.id}|${req.streamId}|${req.bucketSeconds}|${req.format}|${req.fingerprint}${signer}`;
    const hit = this.bodies.get(key);
    if (hit) return hit;
    // A failure (a timeout, a cancellation) is not remembered: the next request tries again.
    return this.pending.join(
      key,
      async (workSignal) => {
        const { served, current } = await this.produce(req, snapshotEtag(req.snap, key), workSignal);
        if (current) this.bodies.set(key, served);
        return served;
      },
      signal,
    );
  }

  private async produce(req: ReportRequest, etag: string, signal: AbortSignal): Promise<{ served: ServedReport; current: boolean }> {
    const file = await this.prerendered(req);
    if (file) return { served: { body: file, etag, source: 'prerendered' }, current: true };
    if (req.format === 'jws') return { served: { body: await this.statement(req, signal), etag, source: 'rendered' }, current: true };
    const composed = await this.compose(req, signal);
    // The tenant changed between reading it here and composing: serve, but keep nothing.
    const current = composed.fingerprint === req.fingerprint;
    if (!current) this.composed.delete(composedKey(req));
    return { served: { body: Buffer.from(renderReport(composed.report, req.format)), etag, source: 'rendered' }, current };
  }

  /** A statement signed now over the bytes this process serves for the request's three formats. */
  private async statement(req: ReportRequest, signal: AbortSignal): Promise<Buffer> {
    const [json, md, html] = await Promise.all(REPORT_FORMATS.map((format: ReportFormat) => this.served({ ...req, format }, signal)));
    const bodies = { json: json!.body, md: md!.body, html: html!.body };
    const jws = await signStatement(claimsOfJson(bodies.json), bodies, await currentReportKey(this.layout));
    return Buffer.from(jws);
  }

  /**
   * The latest report a nightly run published for the stream (the newest snapshot folder of its
   * customer that holds it), whatever the served snapshot: its file as written, or null when no run
   * published one. Snapshot ids begin with their time, so the newest folder sorts last.
   */
  async published(streamId: string, format: ServedFormat): Promise<PublishedReport | null> {
    const customerId = parseStreamId(streamId)?.customerId;
    if (!customerId) return null;
    for await (const { dir, published } of publishedReportsNewestFirst(this.layout, customerId)) {
      if (!published.streams.some((s) => s.streamId === streamId)) continue;
      // A folder removed meanwhile (retention) is passed over like one without the stream.
      const body = await fs.readFile(path.join(dir, ...reportPath(streamId, format).split('/'))).catch(() => null);
      if (!body) continue;
      const etag = `"published-${createHash('sha256').update(`${published.snapshot}|${streamId}|${format}|${published.renderedAt}`).digest('base64url').slice(0, 27)}"`;
      return { body, etag, snapshot: published.snapshot, asOf: published.asOf, renderedAt: published.renderedAt };
    }
    return null;
  }

  /** The nightly run's file for this request, when its folder was rendered from the same inputs. */
  private async prerendered({ snap, customerId, streamId, bucketSeconds, format, platform, fingerprint }: ReportRequest): Promise<Buffer | null> {
    if (bucketSeconds !== platform.pilot.defaultBucketSeconds) return null;
    const dir = customerReportsDir(this.layout, snap.id, customerId);
    const published = await readPublishedReports(dir);
    if (!published || published.snapshot !== snap.id || published.bucketSeconds !== bucketSeconds || published.fingerprint !== fingerprint) return null;
    if (!published.streams.some((s) => s.streamId === streamId)) return null;
    // The folder may be replaced between the two reads; a missing file just means rendering.
    return fs.readFile(path.join(dir, ...reportPath(streamId, format).split('/'))).catch(() => null);
  }

  /** The report object, shared by the formats of one request's inputs. */
  private async compose(req: ReportRequest, signal: AbortSignal): Promise<Composed> {
    const key = composedKey(req);
    const hit = this.composed.get(key);
    if (hit) return hit;
    return this.composing.join(
      key,
      async (workSignal) => {
        const composed = await this.composeNow(req, workSignal);
        this.composed.set(key, composed);
        return composed;
      },
      signal,
    );
  }

  private async composeNow({ snap, customerId, streamId, bucketSeconds, platform }: ReportRequest, signal: AbortSignal): Promise<Composed> {
    const deps = { db: this.db, layout: this.layout, platform };
    try {
      const { reports, tenant } = await composeCustomerReports(deps, { id: snap.id, manifest: snap.manifest }, customerId, bucketSeconds, streamId, (fn) =>
        this.db.withSessionTimeout(this.timeoutMs, fn, { signal, releaseAfter: true }),
      );
      const report = reports[0];
      if (!report) throw problems.streamNotFound();
      return { report, fingerprint: inputsFingerprint(tenant, platform) };
    } catch (err) {
      if (err instanceof QueryTimeout) throw problems.timeout();
      throw err;
    }
  }
}
