// The Koa application: the request frame (ids, logs, problem+json errors, the snapshot the
// request reads), then the routes.
import Koa from 'koa';
import { Router } from '@koa/router';
import { requestFrame } from './request-context.ts';
import { authenticate } from './auth.ts';
import { healthRoutes } from './routes/health.ts';
import { telemetryRoutes } from './routes/telemetry.ts';
import { tenantsRoutes } from './routes/tenants.ts';
import { billingRoutes } from './routes/billing.ts';
import { originsRoutes } from './routes/origins.ts';
import { manifestRoutes } from './routes/manifest.ts';
import { reportsRoutes } from './routes/reports.ts';
import type { ApiDeps } from './deps.ts';

export function createApp(deps: ApiDeps): Koa {
  const app = new Koa({ proxy: false });
  // Errors of handlers are logged by the request frame; what still reaches Koa (a failing stream
  // body, an error in the frame itself) is logged here, with the request id, rather than dropped.
  app.silent = true;
  app.on('error', (err: unknown, ctx?: { state?: Record<string, unknown> }) => {
    deps.log.error({ err, reqId: ctx?.state?.['reqId'] }, 'error outside the request frame');
  });

  const router = new Router();
  const auth = authenticate(deps.secret, deps.revocation);
  healthRoutes(router, deps);
  telemetryRoutes(router, deps, auth);
  originsRoutes(router, deps, auth);
  manifestRoutes(router, deps, auth);
  tenantsRoutes(router, deps, auth);
  billingRoutes(router, deps, auth);
  reportsRoutes(router, deps, auth);

  app.use(requestFrame(deps.log, deps.store));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
