// Liveness, readiness (a snapshot is loaded: which one, as of when) and the OpenAPI document.
import type { Router } from '@koa/router';
import { problems } from '../../served/problems.ts';
import { OPENAPI_JSON } from '../openapi.ts';
import type { ApiDeps } from '../deps.ts';

export function healthRoutes(router: Router, deps: ApiDeps): void {
  router.get('/healthz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', (ctx) => {
    const snap = deps.store.current();
    if (!snap) throw problems.snapshotUnavailable();
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: 'ready', snapshot: snap.id, asOf: snap.manifest.asOf };
  });

  router.get('/openapi.json', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.type = 'application/json';
    ctx.body = OPENAPI_JSON;
  });
}
