// POST /v1/session-reports: the SDK's only route (docs/sdk-ingest.md). Key, media type and size
// are checked from the headers; then admission (rate per key, spool room); then the body is read
// within its size and checked by a batch worker (collector/batch.ts, batch-pool.ts): inflated
// within its limit, a foreign stream refuses the whole request (403, nothing stored), each other
// report is validated on its own; the valid ones are answered only once they are fsynced in the
// spool. CORS is open to any page: the key is public and can only write.
import type { Context, Next } from 'koa';
import type { Router } from '@koa/router';
import { checkHeaders, gzipped, mediaType, readBody } from './body.ts';
import type { BatchOutcome, Rejection } from './batch.ts';
import type { TimeWindow } from './session-report-schema.ts';
import { batchProblem, ingestProblems } from './problems.ts';
import { SPOOL_FULL_RETRY_SECONDS, SPOOL_RETRY_SECONDS, spoolHasRoom } from './limits.ts';
import type { CollectorDeps } from './deps.ts';
import { countReports } from './metrics.ts';

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

/**
 * The key a request presents, checked. A client address that presented too many refused keys
 * lately gets 429 before its key is even looked at, so guessing keys gains nothing.
 */
async function checkKey(ctx: Context, deps: CollectorDeps) {
  const address = ctx.ip;
  const wait = deps.keyFailures.retryAfter(address);
  if (wait > 0) throw ingestProblems.tooManyKeyFailures(wait);
  const presented = ctx.get('X-Ingest-Key') || (typeof ctx.query['key'] === 'string' ? ctx.query['key'] : '');
  const key = await deps.keys.check(presented.trim() === '' ? null : presented.trim());
  if (key.ok) return key;
  if (key.reason !== 'missing') {
    deps.keyFailures.consume(address, 1);
    deps.log.info({ address, reason: key.reason }, 'collector: an ingest key was refused');
  }
  throw ingestProblems.invalidKey(key.reason);
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
    const { config, spool, limiter, budgets } = deps;
    const key = await checkKey(ctx, deps);
    checkHeaders(ctx, config);
    const wait = limiter.retryAfter(key.key.id);
    if (wait > 0) throw ingestProblems.rateLimited(wait);
    const over = budgets.retryAfter(key.key.id);
    if (over > 0) throw ingestProblems.overBudget(over);
    if (spool.failed()) throw ingestProblems.unavailable(SPOOL_RETRY_SECONDS);
    if (!spoolHasRoom(spool, config.spoolMaxBytes)) throw ingestProblems.spoolFull(SPOOL_FULL_RETRY_SECONDS);

    const raw = await readBody(ctx, config);
    const now = deps.now();
    const window: TimeWindow = { latestMs: now + config.maxFutureMs, earliestMs: now - config.lateHorizonMs };
    let outcome: BatchOutcome;
    try {
      outcome = await deps.batches.check(raw, { gzip: gzipped(ctx), ndjson: mediaType(ctx).endsWith('ndjson'), customerId: key.customerId, window });
      budgets.charge(key.key.id, outcome.work);
    } catch (err) {
      // A batch worker died under this batch (logged by the pool): nothing was stored.
      deps.log.error({ err }, 'collector: a batch could not be checked');
      throw ingestProblems.unavailable(5);
    }
    if (outcome.reports !== null) limiter.consume(key.key.id, outcome.reports);
    if (!outcome.ok) throw batchProblem(outcome.problem);
    if (outcome.accepted > 0) {
      try {
        await spool.append(Buffer.from(outcome.lines.buffer, outcome.lines.byteOffset, outcome.lines.byteLength), outcome.accepted);
      } catch {
        // Logged by the spool, which tries again on its own; nothing of this request is acknowledged.
        throw ingestProblems.unavailable(SPOOL_RETRY_SECONDS);
      } finally {
        // Written and fsynced (or failed): its memory goes back to the workers for the next batch's lines.
        deps.batches.recycle(outcome.lines);
      }
    }
    countReports(outcome.accepted, outcome.rejected.length);
    ctx.status = 202;
    ctx.set('Cache-Control', 'no-store');
    const body: IngestResult = { accepted: outcome.accepted, rejected: outcome.rejected };
    ctx.body = body;
  });
}
