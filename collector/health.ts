// The collector's liveness, readiness (the spool takes writes and has room) and its OpenAPI document.
import type { Router } from '@koa/router';
import { ingestProblems } from './problems.ts';
import { SPOOL_FULL_RETRY_SECONDS, SPOOL_RETRY_SECONDS, spoolHasRoom } from './limits.ts';
import { COLLECTOR_OPENAPI_JSON } from './openapi.ts';
import type { CollectorDeps } from './deps.ts';

export function collectorHealthRoutes(router: Router, deps: CollectorDeps): void {
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', (ctx) => {
    const failure = deps.spool.failed();
    if (failure) throw ingestProblems.spoolFailing(failure, SPOOL_RETRY_SECONDS);
    if (!spoolHasRoom(deps.spool, deps.config.spoolMaxBytes)) throw ingestProblems.spoolFull(SPOOL_FULL_RETRY_SECONDS);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ready', spool: { bytes: deps.spool.bytes(), sealedSegments: deps.spool.sealed().length } };
  });

  router.get('/openapi.json', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'application/json';
    ctx.body = COLLECTOR_OPENAPI_JSON;
  });
}
