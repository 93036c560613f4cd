// The request histogram is counted by hand (lib/http/metrics.ts) and exposed in prom-client's
// layout: its text must be what prom-client's own histogram writes for the same observations.
import { describe, expect, it } from 'vitest';
import client from 'prom-client';
import type { Context } from 'koa';
import { observeRequest } from '../../../lib/http/metrics.ts';
import { metricsText, registry } from '../../../lib/metrics.ts';

const NAME = 'p2ptel_http_request_duration_seconds';
const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The lines of one metric in a text exposition. */
const linesOf = (text: string) => text.split('\n').filter((l) => l.startsWith(NAME) || l.includes(` ${NAME} `));

describe('request histogram', () => {
  it('writes what prom-client writes for the same requests: bucket edges, +Inf, labels, sums', async () => {
    const reference = new client.Registry();
    const expected = new client.Histogram({
      name: NAME,
      help: 'HTTP requests (API, collector) by method, route template and status: time until the response (or its headers, for a stream) was handed to Node',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: BOUNDS,
      registers: [reference],
    });
    // Koa's context as the request frame hands it over: the method and status on Node's objects,
    // the route template the router matched (absent on a 404; a RegExp route is labelled as text).
    const requests: { method: string; route: string | RegExp | undefined; status: number; ms: number }[] = [];
    const routes = ['/telemetry/metrics/:streamId', '/telemetry/streams', undefined, /^\/legacy\/(\d+)$/];
    const edges = [0, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 30000.001, 45000];
    let i = 0;
    for (const route of routes) {
      for (const method of ['GET', 'HEAD', 'POST']) {
        for (const status of [200, 304, 404, 503]) {
          // Exact bucket edges (in ms, as the frame measures), just past them, and random times.
          for (const ms of [edges[i % edges.length]!, edges[(i + 7) % edges.length]! * 1.0000001, Math.random() * 3000]) requests.push({ method, route, status, ms });
          i++;
        }
      }
    }
    for (const r of requests) {
      const ctx = { req: { method: r.method }, res: { statusCode: r.status }, routerPath: r.route } as unknown as Context;
      observeRequest(ctx, r.ms);
      expected.labels(r.method, String(r.route ?? '(none)'), String(r.status)).observe(r.ms / 1000);
    }
    const ours = linesOf(await metricsText());
    const theirs = linesOf(await reference.metrics());
    expect(ours.length).toBe(2 + 4 * 3 * 4 * (BOUNDS.length + 3));
    expect(ours).toEqual(theirs);
    // And as JSON (prom-client's get, which reads the same values and merges the labels).
    const json = (await registry.getSingleMetric(NAME)!.get()).values;
    expect(json.length).toBe(ours.length - 2);
    expect(json).toEqual((await reference.getSingleMetric(NAME)!.get()).values);
  });
});
