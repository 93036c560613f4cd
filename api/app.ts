// The API's request listener: a repeated GET answered from the replay memo before Koa
// (api/replayed-answers.ts), and the Koa application for everything else: the request frame (ids,
// logs, problem+json errors, the snapshot the request reads), then the routes: the main router (public routes and those any valid token may
// call, each checking its own scoping), then the operator router (routes/operator.ts), whose own
// middleware refuses every tenant token.
import type { RequestListener } from 'node:http';
import Koa from 'koa';
import { Router, type RouterMiddleware } from '@koa/router';
import { apiRequestFrame } from './request-context.ts';
import { TokenAuth } from './auth.ts';
import { Replays } from './replayed-answers.ts';
import { healthRoutes } from './routes/health.ts';
import { telemetryRoutes } from './routes/telemetry.ts';
import { breakdownRoutes } from './routes/breakdown.ts';
import { summaryRoutes } from './routes/summary.ts';
import { tenantsRoutes } from './routes/tenants.ts';
import { billingRoutes } from './routes/billing.ts';
import { originsRoutes } from './routes/origins.ts';
import { manifestRoutes } from './routes/video-manifest.ts';
import { reportsRoutes } from './routes/pilot-reports.ts';
import { jwksRoutes } from './routes/jwks.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { alertsRoutes } from './routes/alerts.ts';
import { webhooksRoutes } from './routes/webhooks.ts';
import { assertSectioned, operatorRouter } from './routes/operator.ts';
import type { ApiDeps } from './deps.ts';

export interface ApiRouters {
  main: Router;
  operators: Router;
  /** The authentication middleware, as the main router's routes list it. */
  auth: RouterMiddleware;
  /** Answers repeated before the routers (api/replayed-answers.ts). */
  replays: Replays;
}

export function apiRouters(deps: ApiDeps): ApiRouters {
  const main = new Router();
  const tokens = new TokenAuth(deps.secret, deps.revocation);
  const auth = tokens.middleware;
  const replays = new Replays(deps.config.api.caches.replays, tokens);
  const operators = operatorRouter(auth);
  healthRoutes(main, deps);
  telemetryRoutes(main, deps, { auth, remember: replays.remember }, operators);
  breakdownRoutes(main, deps, { auth, remember: replays.remember });
  summaryRoutes(main, deps, { auth, remember: replays.remember });
  originsRoutes(main, deps, auth);
  manifestRoutes(main, deps, auth);
  reportsRoutes(main, deps, auth);
  jwksRoutes(main, deps);
  alertsRoutes(main, deps, auth);
  webhooksRoutes(main, deps, auth);
  tenantsRoutes(operators, deps);
  billingRoutes(operators, deps);
  metricsRoutes(operators);
  assertSectioned(operators);
  return { main, operators, auth, replays };
}

/** Every route: method, path template, and who may call it (by the router it is on and its middleware). */
export function routeTable(r: ApiRouters): { method: string; path: string; access: 'public' | 'token' | 'operator' }[] {
  const rows = (router: Router, access: (stack: readonly unknown[]) => 'public' | 'token' | 'operator') =>
    router.stack
      .filter((l) => l.methods.length > 0)
      .flatMap((l) => l.methods.filter((m) => m !== 'HEAD').map((method) => ({ method, path: String(l.path), access: access(l.stack) })));
  return [...rows(r.main, (stack) => (stack.includes(r.auth) ? 'token' : 'public')), ...rows(r.operators, () => 'operator')];
}

/**
 * Pages served beside the JSON routes by the same process (the portal): what runs before the
 * routes for its own paths (headers, error pages), its router, and word of where the API listens.
 * The process that starts the API composes them (cli/actions/start.ts, serve.ts): the API does not
 * know the portal.
 */
export interface ApiPages {
  frame: Koa.Middleware;
  router: Router;
  listening(url: string): void;
}

export interface ApiApp {
  koa: Koa;
  /** What the HTTP server calls: replays first, then Koa. */
  listener: RequestListener;
}

export function createApp(deps: ApiDeps, pages: ApiPages | null = null): ApiApp {
  const app = new Koa({ proxy: false });
  // Errors of handlers are logged by the request frame; what still reaches Koa (a failing stream
  // body, an error in the frame itself) is logged here, with the request id, rather than dropped.
  app.silent = true;
  app.on('error', (err: unknown, ctx?: { state?: Record<string, unknown> }) => {
    deps.log.error({ err, reqId: ctx?.state?.['reqId'] }, 'error outside the request frame');
  });

  const { main, operators, replays } = apiRouters(deps);
  app.use(apiRequestFrame(deps.log, deps.store));
  if (pages) app.use(pages.frame);
  app.use(main.routes());
  app.use(operators.routes());
  // The pages (the portal under /portal/, portal/router.ts): sessions of their own; the JSON routes
  // above keep bearer tokens only.
  if (pages) app.use(pages.router.routes());
  // After both routers: ctx.matched gathers what either matched, for 405 and Allow.
  app.use(main.allowedMethods());
  return { koa: app, listener: replays.listener(app.callback(), deps.store, deps.log) };
}
