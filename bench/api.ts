// npm run bench:api -- [--duration 10] [--connections 20] [--runs 2] [--log-level info]
// Load on GET /telemetry/metrics/:streamId and GET /telemetry/streams?detail=1 from autocannon in
// this process, against the real API (cli serve, in its own process) and, in the same run, a bare
// node:http server answering the identical bytes (bench/bare-server.ts) and a minimal Koa app doing
// the same (bench/koa-floor-server.ts). Prints req/s and p99 of each and the ratios.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { PROJECT_ROOT } from '../lib/version.ts';
import { openJobDeps } from '../jobs/deps.ts';
import { runPipeline } from '../jobs/pipeline.ts';
import { generateReports } from '../warehouse/sample/generate.ts';
import { discoverLanding } from '../warehouse/landing.ts';
import { addTenant, findTenant } from '../warehouse/control/tenants.ts';
import { issueToken, tokenSecret } from '../api/tokens.ts';
import { describeRatio, median, writeResult } from './report.ts';
import { type LoadResult, load as loadUrl, loadStats, startChild as startIn } from './servers.ts';

const opts = new Command()
  .option('--duration <s>', 'seconds of load per measurement', '10')
  .option('--connections <n>', 'concurrent connections', '20')
  .option('--runs <k>', 'measurements of each server per route', '2')
  .option('--log-level <level>', "the API's LOG_LEVEL (info: one JSON line per request, as deployed)", 'info')
  .parse()
  .opts<{ duration: string; connections: string; runs: string; logLevel: string }>();

const dir = path.join(PROJECT_ROOT, 'bench', 'output', 'api-warehouse');
const config = loadConfig({ warehouseDir: dir });
const deps = await openJobDeps(config, silentLogger);
if ((await discoverLanding(deps.layout)).files.length === 0) {
  await generateReports(deps.db, deps.layout, {
    customers: ['acme', 'globex', 'initech'],
    streams: 3,
    sessions: 400,
    start: new Date('2026-11-20T00:00:00Z'),
    hours: 6,
    seed: 1,
  });
}
await runPipeline(deps, { asOf: new Date('2026-11-20T06:00:00Z') });
const tenant =
  (await findTenant(deps.layout, 'acme')) ??
  (await addTenant(deps.layout, { customerId: 'acme', name: 'Acme', cdnPricePerGb: null, savingsSharePct: 25 }));
const token = await issueToken(await tokenSecret(deps.layout, null), { role: 'tenant', tenant }, 3600);
await deps.close();

const startChild = (args: string[], ready: RegExp, env: Record<string, string> = {}) => startIn(dir, args, ready, env);
const load = (url: string) => loadUrl(url, { connections: Number(opts.connections), duration: Number(opts.duration), token });

// The real API, as deployed: info-level request logs, going nowhere here.
const api = await startChild(['bin/p2ptel.js', 'serve', '--warehouse', dir, '--port', '0'], /API listening on (\S+)/, { LOG_LEVEL: opts.logLevel });
const routes = ['/telemetry/metrics/acme:live-main?window=24h', '/telemetry/streams?detail=1'];
const canned: Record<string, { status: number; headers: Record<string, string>; body: string }> = {};
for (const route of routes) {
  const res = await fetch(`${api.url}${route}`, { headers: { Authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`${route}: ${res.status}`);
  const headers: Record<string, string> = {};
  for (const h of ['content-type', 'etag', 'last-modified', 'cache-control', 'x-content-type-options']) headers[h] = res.headers.get(h)!;
  canned[route] = { status: 200, headers, body: Buffer.from(await res.arrayBuffer()).toString('base64') };
}
const cannedFile = path.join(dir, 'canned-responses.json');
await fs.writeFile(cannedFile, JSON.stringify(canned));
const bare = await startChild(['bin/run-ts.js', 'bench/bare-server.ts', cannedFile], /^(http:\S+)/m);
const koaFloor = await startChild(['bin/run-ts.js', 'bench/koa-floor-server.ts', cannedFile], /^(http:\S+)/m);

const results: Record<string, unknown>[] = [];
const lines: string[] = [];
for (const route of routes) {
  const ours: LoadResult[] = [];
  const base: LoadResult[] = [];
  const floor: LoadResult[] = [];
  await load(`${api.url}${route}`); // warm-up
  for (let i = 0; i < Number(opts.runs); i++) {
    const o = await load(`${api.url}${route}`);
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
  const stats = (xs: { rps: number; p99: number; non2xx: number }[]) => loadStats(xs, median);
  const r = { route, ours: stats(ours), bare: stats(base), koaFloor: stats(floor) };
  const rpsRatio = r.ours.rps / r.bare.rps;
  const p99Ratio = r.ours.p99 / Math.max(r.bare.p99, 1);
  results.push({ ...r, rpsRatio, p99Ratio });
  lines.push(
    `  ${route}`,
    `    API  ${Math.round(r.ours.rps)} req/s, p99 ${r.ours.p99} ms   bare node:http  ${Math.round(r.bare.rps)} req/s, p99 ${r.bare.p99} ms`,
    `    minimal Koa + router, same bytes: ${Math.round(r.koaFloor.rps)} req/s (${(r.koaFloor.rps / r.bare.rps).toFixed(2)}× bare), p99 ${r.koaFloor.p99} ms`,
    `    ${describeRatio('req/s, API / bare', rpsRatio, 0.7, false)}; ${describeRatio('p99, API / bare', p99Ratio, 2)}`,
    `    req/s, API / minimal Koa: ${(r.ours.rps / r.koaFloor.rps).toFixed(2)}×`,
  );
}
process.stdout.write(`API benchmark: ${opts.connections} connections, ${opts.duration} s per measurement, median of ${opts.runs}\n${lines.join('\n')}\n`);
await writeResult('api', { connections: Number(opts.connections), duration: Number(opts.duration), runs: Number(opts.runs), results });
api.child.kill('SIGTERM');
bare.child.kill('SIGTERM');
koaFloor.child.kill('SIGTERM');
