// The Koa application: request ids and logs, problem+json errors, the snapshot captured per
// request, then the routes.
import Koa from 'koa';
import { Router } from '@koa/router';
import { errorMiddleware, problems } from './errors.ts';
import { requestContext } from './request-context.ts';
import { authenticate } from './auth.ts';
import { healthRoutes } from './routes/health.ts';
import { telemetryRoutes } from './routes/telemetry.ts';
import { operatorRoutes } from './routes/operator.ts';
import type { ApiDeps } from './deps.ts';

export function createApp(deps: ApiDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true; // errors are logged by the error middleware, once, with the request id

  const router = new Router();
  const auth = authenticate(deps.secret);
  healthRoutes(router, deps);
  telemetryRoutes(router, deps, auth);
  operatorRoutes(router, auth);

  app.use(requestContext(deps.log));
  app.use(errorMiddleware(deps.log));
  app.use(async (ctx, next) => {
    // One snapshot per request: a swap during the request does not change what it reads.
    ctx.state['snapshot'] = deps.store.current();
    ctx.set('X-Content-Type-Options', 'nosniff');
    await next();
    if (ctx.status === 405 && ctx.body === undefined) throw problems.methodNotAllowed((ctx.response.get('Allow') || 'GET').split(/,\s*/));
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
