// Requests of a Koa app (the API, the collector) by method, route template and status, as one
// histogram (its _count is the request count). Label values are bounded: route templates (never
// raw paths), methods, status codes.
import type { Context } from 'koa';
import client from 'prom-client';
import { registry } from './metrics.ts';

const requestSeconds = new client.Histogram({
  name: 'p2ptel_http_request_duration_seconds',
  help: 'HTTP requests (API, collector) by method, route template and status: time until the response (or its headers, for a stream) was handed to Node',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});


type Observer = { observe(v: number): void };
const children = new Map<string, Observer>();

/**
 * Count one request that took `ms`, labelled by the route template the router matched (`(none)`
 * for a path no route has), its method and status: the request frame calls it once per request
 * (api/request-context.ts). Label children are kept, so a request costs a map lookup and one
 * observation.
 */
export function observeRequest(ctx: Context, ms: number): void {
  const route = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
  const method = ctx.req.method!;
  const status = ctx.res.statusCode;
  const key = `${method} ${String(route ?? '(none)')} ${status}`;
  let child = children.get(key);
  if (!child) {
    child = requestSeconds.labels(method, String(route ?? '(none)'), String(status));
    children.set(key, child);
  }
  child.observe(ms / 1000);
}
