// Requests of a Koa app (the API, the collector) by method, route template and status, as one
// histogram (its _count is the request count). Label values are bounded: route templates (never
// raw paths), methods, status codes.
//
// Observed as plain numbers, handed to prom-client when scraped: a request is counted in a few
// array slots found by nested map lookups of values Koa already holds (prom-client's own
// `observe`, even on a label child kept aside, validates and hashes the labels on every call;
// docs/api.md, "Performance"). The exposition is prom-client's, line for line.
import type { Context } from 'koa';
import client from 'prom-client';
import { registry } from '../metrics.ts';

type LabelName = 'method' | 'route' | 'status';
type Labels = Record<LabelName, string>;

/** Upper bounds of the buckets, seconds. */
const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The requests of one label set: a count per bucket (not cumulative; the last is +Inf), sum, count. */
interface Counts {
  labels: Labels;
  buckets: Float64Array;
  sum: number;
  count: number;
}

/** By route template, method, status, in order of first use (the order of the exposition). */
const byRoute = new Map<string, Map<string, Map<number, Counts>>>();
const all: Counts[] = [];

/** One value of the exposition, as prom-client's histogram gives it to the registry. */
interface ExposedValue {
  labels: { le?: number | string };
  sharedLabels: Labels;
  value: number;
  metricName: string;
  /** None are kept (as prom-client's buckets without exemplars say it). */
  exemplar?: null;
}

const NAME = 'p2ptel_http_request_duration_seconds';
const HELP =
  'HTTP requests (API, collector) by method, route template and status: time until the response (or its headers, for a stream) was handed to Node';

class RequestHistogram extends client.Histogram<LabelName> {
  /**
   * What the registry reads for the text exposition, in prom-client's histogram layout (its `get`,
   * for JSON, reads this too and merges each value's labels).
   */
  getForPromString(): Promise<{ name: string; help: string; type: 'histogram'; values: ExposedValue[]; aggregator: 'sum' }> {
    const values: ExposedValue[] = [];
    for (const c of all) {
      let acc = 0;
      for (let i = 0; i < BOUNDS.length; i++) {
        acc += c.buckets[i]!;
        values.push({ labels: { le: BOUNDS[i]! }, sharedLabels: c.labels, value: acc, metricName: `${NAME}_bucket`, exemplar: null });
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: c.labels, value: c.count, metricName: `${NAME}_bucket`, exemplar: null });
      values.push({ labels: {}, sharedLabels: c.labels, value: c.sum, metricName: `${NAME}_sum` });
      values.push({ labels: {}, sharedLabels: c.labels, value: c.count, metricName: `${NAME}_count` });
    }
    return Promise.resolve({ name: NAME, help: HELP, type: 'histogram', values, aggregator: 'sum' });
  }
}

new RequestHistogram({
  name: NAME,
  help: HELP,
  labelNames: ['method', 'route', 'status'] as const,
  buckets: BOUNDS,
  registers: [registry],
});

/**
 * The route template the router matched for this request (@koa/router's `ctx.routerPath`; a RegExp
 * for a route declared as one), undefined when no route matched.
 */
export function matchedRoute(ctx: Context): string | RegExp | undefined {
  return (ctx as Context & { routerPath?: string | RegExp }).routerPath;
}

/**
 * Count one request that took `ms`, labelled by the route template the router matched (`(none)`
 * for a path no route has), its method and status: the request frame calls it once per request
 * (lib/http/frame.ts).
 */
export function observeRequest(ctx: Context, ms: number): void {
  const matched = matchedRoute(ctx);
  observeRequestOf(typeof matched === 'string' ? matched : String(matched ?? '(none)'), ctx.req.method!, ctx.res.statusCode, ms);
}

/** One request of `route` (a router's template), answered with `status` after `ms`. */
export function observeRequestOf(route: string, method: string, status: number, ms: number): void {
  let methods = byRoute.get(route);
  if (!methods) byRoute.set(route, (methods = new Map()));
  let statuses = methods.get(method);
  if (!statuses) methods.set(method, (statuses = new Map()));
  let c = statuses.get(status);
  if (!c) {
    c = { labels: { method, route, status: String(status) }, buckets: new Float64Array(BOUNDS.length), sum: 0, count: 0 };
    statuses.set(status, c);
    all.push(c);
  }
  const s = ms / 1000;
  c.sum += s;
  c.count++;
  for (let i = 0; i < BOUNDS.length; i++) {
    if (s <= BOUNDS[i]!) {
      c.buckets[i]!++;
      break;
    }
  }
}
