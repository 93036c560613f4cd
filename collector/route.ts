// POST /v1/session-reports: the SDK's only route (docs/sdk-ingest.md). Key, media type and size
// are checked from the headers; then admission (rate per key, spool room); then the body is read
// within its limits, a foreign stream refuses the whole request (403, nothing stored), each other
// report is validated on its own, and the valid ones are answered only once they are fsynced in
// the spool. CORS is open to any page: the key is public and can only write.
import type { Context, Next } from 'koa';
import type { Router } from '@koa/router';
import { checkIngestKey } from '../warehouse/control/ingest-keys.ts';
import { checkHeaders, readReports } from './body.ts';
import { checkReport, type TimeWindow } from './report-schema.ts';
import { ingestProblems, type Rejection } from './problems.ts';
import { SPOOL_FULL_RETRY_SECONDS, spoolHasRoom } from './limits.ts';
import type { CollectorDeps } from './deps.ts';

export const SESSION_REPORTS_PATH = '/v1/session-reports';

const ALLOWED_HEADERS = 'Content-Type, Content-Encoding, X-Ingest-Key, X-Request-Id';

/** CORS for the ingest route, on every answer (errors too, so that a page can read a 429). */
export function ingestCors() {
  return async function ingestCorsMiddleware(ctx: Context, next: Next): Promise<void> {
    if (ctx.path === SESSION_REPORTS_PATH) {
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.set('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id');
    }
    await next();
  };
}

export interface IngestResult {
  accepted: number;
  rejected: Rejection[];
}

export function sessionReportsRoute(router: Router, deps: CollectorDeps): void {
  router.options(SESSION_REPORTS_PATH, (ctx) => {
    ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    ctx.set('Access-Control-Max-Age', '86400');
    ctx.set('Allow', 'POST, OPTIONS');
    ctx.status = 204;
  });

  router.post(SESSION_REPORTS_PATH, async (ctx) => {
    const { config, spool, limiter } = deps;
    const presented = ctx.get('X-Ingest-Key') || (typeof ctx.query['key'] === 'string' ? ctx.query['key'] : '');
    const key = await checkIngestKey(deps.layout, presented.trim() === '' ? null : presented.trim());
    if (!key.ok) throw ingestProblems.invalidKey(key.reason);
    checkHeaders(ctx, config);
    const wait = limiter.retryAfter(key.key.id);
    if (wait > 0) throw ingestProblems.rateLimited(wait);
    if (spool.failed()) throw ingestProblems.unavailable(30);
    if (!spoolHasRoom(spool, config.spoolMaxBytes)) throw ingestProblems.spoolFull(SPOOL_FULL_RETRY_SECONDS);

    const items = await readReports(ctx, config);
    limiter.consume(key.key.id, items.length);

    // Ownership first: one report of another customer's stream refuses the whole request.
    const prefix = `${key.customerId}:`;
    items.forEach((item, index) => {
      if (!item.ok || typeof item.value !== 'object' || item.value === null) return;
      const streamId = (item.value as Record<string, unknown>)['streamId'];
      if (typeof streamId === 'string' && streamId.includes(':') && !streamId.startsWith(prefix)) throw ingestProblems.foreignStream(index);
    });

    const now = deps.now();
    const window: TimeWindow = { latestMs: now + config.maxFutureMs, earliestMs: now - config.lateHorizonMs };
    const rejected: Rejection[] = [];
    const lines: string[] = [];
    items.forEach((item, index) => {
      if (!item.ok) {
        rejected.push({ index, field: null, reason: item.reason });
        return;
      }
      const r = checkReport(item.value, window);
      if (r.ok) lines.push(JSON.stringify(r.report));
      else rejected.push({ index, field: r.field, reason: r.reason });
    });
    if (lines.length === 0 && rejected.length > 0) throw ingestProblems.allRejected(rejected);
    if (lines.length > 0) {
      try {
        await spool.append(Buffer.from(`${lines.join('\n')}\n`), lines.length);
      } catch {
        // Logged by the spool; nothing of this request is acknowledged.
        throw ingestProblems.unavailable(30);
      }
    }
    ctx.status = 202;
    ctx.set('Cache-Control', 'no-store');
    const body: IngestResult = { accepted: lines.length, rejected };
    ctx.body = body;
  });
}
