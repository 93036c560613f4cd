// Hot-route load comparison shared by bench:api and bench:serve: autocannon on routes of a running
// API, then, in the same run, on a bare node:http server answering the identical bytes
// (bench/bare-server.ts) and on a minimal Koa + @koa/router app doing the same
// (bench/koa-floor-server.ts). Each server runs in its own process.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describeRatio, median } from './report.ts';
import { type LoadResult, load as loadUrl, loadStats, startChild } from './servers.ts';

export interface HotRouteResult {
  route: string;
  ours: { rps: number; p99: number };
  bare: { rps: number; p99: number };
  koaFloor: { rps: number; p99: number };
  rpsRatio: number;
  p99Ratio: number;
  koaRatio: number;
}

export async function compareHotRoutes(opts: {
  apiUrl: string;
  token: string;
  routes: string[];
  dir: string;
  connections: number;
  duration: number;
  runs: number;
}): Promise<{ results: HotRouteResult[]; lines: string[] }> {
  const canned: Record<string, { status: number; headers: Record<string, string>; body: string }> = {};
  for (const route of opts.routes) {
    const res = await fetch(`${opts.apiUrl}${route}`, { headers: { Authorization: `Bearer ${opts.token}` } });
    if (res.status !== 200) throw new Error(`${route}: ${res.status}`);
    const headers: Record<string, string> = {};
    for (const h of ['content-type', 'etag', 'last-modified', 'cache-control', 'x-content-type-options']) headers[h] = res.headers.get(h)!;
    canned[route] = { status: 200, headers, body: Buffer.from(await res.arrayBuffer()).toString('base64') };
  }
  const cannedFile = path.join(opts.dir, 'canned-responses.json');
  await fs.writeFile(cannedFile, JSON.stringify(canned));
  const bare = await startChild(opts.dir, ['bin/run-ts.js', 'bench/bare-server.ts', cannedFile], /^(http:\S+)/m);
  const koaFloor = await startChild(opts.dir, ['bin/run-ts.js', 'bench/koa-floor-server.ts', cannedFile], /^(http:\S+)/m);
  const load = (url: string) => loadUrl(url, { connections: opts.connections, duration: opts.duration, token: opts.token });

  const results: HotRouteResult[] = [];
  const lines: string[] = [];
  try {
    for (const route of opts.routes) {
      const ours: LoadResult[] = [];
      const base: LoadResult[] = [];
      const floor: LoadResult[] = [];
      await load(`${opts.apiUrl}${route}`); // warm-up
      for (let i = 0; i < opts.runs; i++) {
        const o = await load(`${opts.apiUrl}${route}`);
        const b = await load(`${bare.url}${route}`);
        const k = await load(`${koaFloor.url}${route}`);
        if (o.non2xx > 0 || b.non2xx > 0 || k.non2xx > 0) throw new Error(`non-2xx answers: ours ${o.non2xx}, bare ${b.non2xx}, koa ${k.non2xx}`);
        ours.push(o);
        base.push(b);
        floor.push(k);
        process.stderr.write(
          `${route} run ${i + 1}: API ${Math.round(o.rps)} req/s p99 ${o.p99} ms; bare ${Math.round(b.rps)} req/s p99 ${b.p99} ms; minimal Koa ${Math.round(k.rps)} req/s p99 ${k.p99} ms\n`,
        );
      }
      const stats = (xs: LoadResult[]) => loadStats(xs, median);
      const r = { route, ours: stats(ours), bare: stats(base), koaFloor: stats(floor) };
      const rpsRatio = r.ours.rps / r.bare.rps;
      const p99Ratio = r.ours.p99 / Math.max(r.bare.p99, 1);
      const koaRatio = r.ours.rps / r.koaFloor.rps;
      results.push({ ...r, rpsRatio, p99Ratio, koaRatio });
      lines.push(
        `  ${route}`,
        `    API  ${Math.round(r.ours.rps)} req/s, p99 ${r.ours.p99} ms   bare node:http  ${Math.round(r.bare.rps)} req/s, p99 ${r.bare.p99} ms`,
        `    minimal Koa + router, same bytes: ${Math.round(r.koaFloor.rps)} req/s (${(r.koaFloor.rps / r.bare.rps).toFixed(2)}× bare), p99 ${r.koaFloor.p99} ms`,
        `    ${describeRatio('req/s, API / bare', rpsRatio, 0.7, false)}; ${describeRatio('p99, API / bare', p99Ratio, 2)}`,
        `    ${describeRatio('req/s, API / minimal Koa', koaRatio, 0.8, false)}`,
      );
    }
  } finally {
    bare.child.kill('SIGTERM');
    koaFloor.child.kill('SIGTERM');
  }
  return { results, lines };
}
