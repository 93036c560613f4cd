// GET /control/reports/pilot/:streamId (docs/api.md, "Pilot reports"): the pilot report of a
// stream of the caller, as JSON, a Markdown download, a self-contained HTML page, or the signed
// statement of those three (jws, docs/api.md "Report signatures"); with source=published, the
// latest report a nightly run published for the stream.
import type { Router, RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import { problems } from '../../served/problems.ts';
import { notModified, setSnapshotHeaders } from '../http-cache.ts';
import { parseQuery } from '../query.ts';
import { PilotReportQuery } from '../schemas/reports.ts';
import { snapshotOf } from '../request-context.ts';
import { guardedStream, readsTelemetry } from '../telemetry-guard.ts';
import { clientGoneSignal } from '../../served/request-signal.ts';
import { REPORT_MEDIA_TYPES, reportDownloadName, type ServedFormat } from '../../pilot/report-formats.ts';
import type { ApiDeps } from '../deps.ts';

/**
 * The HTML page needs nothing but its own inline styles and SVG: forbid everything else, so that
 * even a value that slipped through escaping could load or run nothing.
 */
const HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function reportsRoutes(router: Router, deps: ApiDeps, auth: RouterMiddleware): void {
  router.get('/control/reports/pilot/:streamId', auth, readsTelemetry({ in: 'path' }), async (ctx) => {
    const streamId = guardedStream(ctx);
    const query = parseQuery(ctx, PilotReportQuery);
    const format = query.format;
    const bucketSeconds = query.bucketSeconds ?? deps.platform.pilot.defaultBucketSeconds;
    const snap = snapshotOf(ctx);
    if (!snap.knows(streamId)) throw problems.streamNotFound();
    if (query.source === 'published') {
      if (query.bucketSeconds !== undefined && query.bucketSeconds !== deps.platform.pilot.defaultBucketSeconds) {
        throw problems.invalidQuery('invalid_bucket_seconds', `A published report is at the platform's default bucket size, ${deps.platform.pilot.defaultBucketSeconds} s.`, { parameter: 'bucketSeconds' });
      }
      const published = await deps.pilotReports.published(streamId, format);
      if (!published) throw problems.reportNotPublished();
      ctx.set('ETag', published.etag);
      ctx.set('Cache-Control', 'private, no-cache');
      ctx.set('X-Report-Source', 'published');
      ctx.set('X-Report-Snapshot', published.snapshot);
      ctx.set('X-Report-As-Of', published.asOf);
      sendReport(ctx, streamId, format, published.etag, published.body);
      return;
    }

    const report = await deps.pilotReports.get(snap, streamId, bucketSeconds, format, clientGoneSignal(ctx));
    setSnapshotHeaders(ctx, snap, report.etag);
    ctx.set('X-Report-Source', report.source);
    sendReport(ctx, streamId, format, report.etag, report.body);
  });
}

/** A report's body with its download name and policy, or 304 when the client holds `etag`. */
function sendReport(ctx: Context, streamId: string, format: ServedFormat, etag: string, body: Buffer): void {
  if (format === 'md' || format === 'jws') ctx.set('Content-Disposition', `attachment; filename="${reportDownloadName(streamId, format)}"`);
  if (format === 'html') ctx.set('Content-Security-Policy', HTML_CSP);
  if (notModified(ctx, etag)) {
    ctx.status = 304;
    return;
  }
  ctx.status = 200;
  ctx.type = REPORT_MEDIA_TYPES[format];
  ctx.body = body;
}
