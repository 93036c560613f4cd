// The collector's Koa application, built in one function: the shared request frame of lib/http
// (request ids, problem+json, one log line per request), CORS of the ingest route, then the routes. Anything
// added later goes here too; its metrics are served on a listener of their own (server.ts).
import Koa from 'koa';
import { Router } from '@koa/router';
import { requestFrame } from '../lib/http/frame.ts';
import { ingestCors, sessionReportsRoute } from './route.ts';
import { collectorHealthRoutes } from './health.ts';
import type { CollectorDeps } from './deps.ts';

export function createCollectorApp(deps: CollectorDeps): Koa {
  const app = new Koa({ proxy: false });
  app.silent = true; // errors are logged by the frame, once, with the request id

  const router = new Router();
  collectorHealthRoutes(router, deps);
  sessionReportsRoute(router, deps);

  app.use(requestFrame(deps.log));
  app.use(ingestCors());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
