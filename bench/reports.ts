// npm run bench:reports -- [--customers 3] [--streams 4] [--sessions 400] [--hours 24] [--runs 3]
//                          [--duration 5] [--connections 20]
// 1. Rendering: the nightly report run (the same function as the job and `cli reports`) over a
//    generated data set, forced to render every report, several times; the median time per report
//    of the figures (shared SQL + model) and of each format, and the sizes.
// 2. Serving: a pre-rendered report through the real API (cli serve, its own process) against, in
//    the same run, a bare node:http server answering the same bytes from memory (the API
//    benchmark's baseline) and one reading the same file from disk on every request (a static host).
import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { PROJECT_ROOT } from '../lib/version.ts';
import { openJobDeps } from '../jobs/deps.ts';
import { runPipeline } from '../jobs/pipeline.ts';
import { runReports } from '../jobs/pilot-reports/run.ts';
import { generateReports } from '../warehouse/sample/index.ts';
import { discoverLanding } from '../warehouse/landing/index.ts';
import { addTenant, findTenant, type Tenant } from '../control/tenants.ts';
import { issueToken, tokenSecret } from '../api/tokens.ts';
import { customerReportsDir, reportPath } from '../pilot/publish.ts';
import { REPORT_FORMATS, type ReportFormat } from '../pilot/report-formats.ts';
import { describeRatio, median, writeResult } from './report.ts';
import { load, loadStats, startChild, type LoadResult } from './servers.ts';

const opts = new Command()
  .option('--customers <n>', 'customers in the data set', '3')
  .option('--streams <n>', 'streams per customer', '4')
  .option('--sessions <n>', 'sessions per stream', '400')
  .option('--hours <h>', 'length of the pilot in hours (the series has hours × 6 buckets of 10 min)', '24')
  .option('--runs <k>', 'rendering runs and load measurements of each server', '3')
  .option('--duration <s>', 'seconds of load per measurement', '5')
  .option('--connections <n>', 'concurrent connections', '20')
  .parse()
  .opts<{ customers: string; streams: string; sessions: string; hours: string; runs: string; duration: string; connections: string }>();

const runs = Number(opts.runs);
const customers = Array.from({ length: Number(opts.customers) }, (_, i) => ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'soylent'][i] ?? `c${i}`);
const start = new Date('2026-11-19T00:00:00Z');
const asOf = new Date(start.getTime() + Number(opts.hours) * 3_600_000);
const dir = path.join(PROJECT_ROOT, 'bench', 'output', `reports-warehouse-${customers.length}x${opts.streams}x${opts.sessions}x${opts.hours}h`);

const config = loadConfig({ overrides: { WAREHOUSE_DIR: dir } });
const deps = await openJobDeps(config, silentLogger);
if ((await discoverLanding(deps.layout)).files.length === 0) {
  process.stderr.write(`generating ${customers.length} × ${opts.streams} streams × ${opts.sessions} sessions over ${opts.hours} h…\n`);
  await generateReports(deps.db, deps.layout, { customers, streams: Number(opts.streams), sessions: Number(opts.sessions), start, hours: Number(opts.hours), seed: 7 });
}
const pipeline = await runPipeline(deps, { asOf });
const tenants: Tenant[] = [];
for (const [i, customerId] of customers.entries()) {
  tenants.push(
    (await findTenant(deps.layout, customerId)) ??
      (await addTenant(deps.layout, { customerId, name: customerId.toUpperCase(), cdnPricePerGb: i === 0 ? 0.035 : null, savingsSharePct: 20 })),
  );
}

// 1. Rendering.
type Per = Record<'figures' | ReportFormat, number[]>;
const perReport: Per = { figures: [], json: [], md: [], html: [] };
const wall: number[] = [];
let reportCount = 0;
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  const r = await runReports(deps, { asOf, force: true });
  wall.push(performance.now() - t0);
  reportCount = r.reports;
  const sum = (f: (p: (typeof r.publications)[number]) => number) => r.publications.reduce((n, p) => n + f(p), 0) / r.reports;
  perReport.figures.push(sum((p) => p.ms.figures));
  for (const f of REPORT_FORMATS) perReport[f].push(sum((p) => p.ms.render[f]));
  process.stderr.write(
    `rendering run ${i + 1}: ${r.reports} reports in ${(wall.at(-1)! / 1000).toFixed(2)} s; per report: figures ${perReport.figures.at(-1)!.toFixed(1)} ms, ` +
      REPORT_FORMATS.map((f) => `${f} ${perReport[f].at(-1)!.toFixed(2)} ms`).join(', ') +
      '\n',
  );
}
const snapshot = pipeline.manifest.snapshot;
const siteDir = customerReportsDir(deps.layout, snapshot, customers[0]!);
const published = JSON.parse(await fs.readFile(path.join(siteDir, 'reports.json'), 'utf8')) as { streams: { streamId: string }[] };
const streamId = published.streams[0]!.streamId;
const sizes: Record<string, number[]> = { json: [], md: [], html: [] };
for (const c of customers) {
  const p = JSON.parse(await fs.readFile(path.join(customerReportsDir(deps.layout, snapshot, c), 'reports.json'), 'utf8')) as { streams: { streamId: string }[] };
  for (const s of p.streams) for (const f of REPORT_FORMATS) sizes[f]!.push((await fs.stat(path.join(customerReportsDir(deps.layout, snapshot, c), reportPath(s.streamId, f)))).size);
}
const token = await issueToken(await tokenSecret(deps.layout, null), { role: 'tenant', tenant: tenants[0]! }, 3600);
await deps.close();

// 2. Serving the pre-rendered files.
const connections = Number(opts.connections);
const duration = Number(opts.duration);
const api = await startChild(dir, ['bin/p2ptel.js', 'serve', '--warehouse', dir, '--port', '0'], /API listening on (\S+)/, { LOG_LEVEL: 'info' });
const routes = (['html', 'json'] as const).map((f) => ({ format: f, route: `/control/reports/pilot/${streamId}?format=${f}` }));
const canned: Record<string, { status: number; headers: Record<string, string>; body: string }> = {};
const staticFiles: Record<string, { file: string; headers: Record<string, string> }> = {};
for (const { format, route } of routes) {
  const res = await fetch(`${api.url}${route}`, { headers: { Authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`${route}: ${res.status} ${await res.text()}`);
  if (res.headers.get('x-report-source') !== 'prerendered') throw new Error(`${route} was not served from the pre-rendered file`);
  const headers: Record<string, string> = {};
  for (const h of ['content-type', 'etag', 'last-modified', 'cache-control', 'x-content-type-options', 'content-security-policy', 'x-report-source']) {
    const v = res.headers.get(h);
    if (v !== null) headers[h] = v;
  }
  canned[route] = { status: 200, headers, body: Buffer.from(await res.arrayBuffer()).toString('base64') };
  staticFiles[route] = { file: path.join(siteDir, reportPath(streamId, format)), headers };
}
await fs.writeFile(path.join(dir, 'canned-responses.json'), JSON.stringify(canned));
await fs.writeFile(path.join(dir, 'static-files.json'), JSON.stringify(staticFiles));
const bare = await startChild(dir, ['bin/run-ts.js', 'bench/bare-server.ts', path.join(dir, 'canned-responses.json')], /^(http:\S+)/m);
const disk = await startChild(dir, ['bin/run-ts.js', 'bench/static-file-server.ts', path.join(dir, 'static-files.json')], /^(http:\S+)/m);

const serving: Record<string, unknown>[] = [];
const lines: string[] = [];
for (const { format, route } of routes) {
  const ours: LoadResult[] = [];
  const base: LoadResult[] = [];
  const files: LoadResult[] = [];
  await load(`${api.url}${route}`, { connections, duration, token }); // warm-up
  for (let i = 0; i < runs; i++) {
    const o = await load(`${api.url}${route}`, { connections, duration, token });
    const b = await load(`${bare.url}${route}`, { connections, duration });
    const d = await load(`${disk.url}${route}`, { connections, duration });
    if (o.non2xx + b.non2xx + d.non2xx > 0) throw new Error(`non-2xx answers: API ${o.non2xx}, bare ${b.non2xx}, static ${d.non2xx}`);
    ours.push(o);
    base.push(b);
    files.push(d);
    process.stderr.write(`${format} run ${i + 1}: API ${Math.round(o.rps)} req/s p99 ${o.p99} ms; bare ${Math.round(b.rps)} req/s p99 ${b.p99} ms; static file ${Math.round(d.rps)} req/s p99 ${d.p99} ms\n`);
  }
  const r = { format, route, bytes: Buffer.from(canned[route]!.body, 'base64').length, ours: loadStats(ours, median), bare: loadStats(base, median), staticFile: loadStats(files, median) };
  serving.push({ ...r, rpsVsBare: r.ours.rps / r.bare.rps, rpsVsStatic: r.ours.rps / r.staticFile.rps, p99VsBare: r.ours.p99 / Math.max(r.bare.p99, 1) });
  lines.push(
    `  ${format} (${r.bytes.toLocaleString('en-US')} bytes)`,
    `    API ${Math.round(r.ours.rps)} req/s, p99 ${r.ours.p99} ms   bare node:http (memory) ${Math.round(r.bare.rps)} req/s, p99 ${r.bare.p99} ms   static file (disk) ${Math.round(r.staticFile.rps)} req/s, p99 ${r.staticFile.p99} ms`,
    `    ${describeRatio('req/s, API / bare', r.ours.rps / r.bare.rps, 0.7, false)}; req/s, API / static file: ${(r.ours.rps / r.staticFile.rps).toFixed(2)}×; ${describeRatio('p99, API / bare', r.ours.p99 / Math.max(r.bare.p99, 1), 2)}`,
  );
}
api.child.kill('SIGTERM');
bare.child.kill('SIGTERM');
disk.child.kill('SIGTERM');

const kb = (xs: number[]) => `${(median(xs) / 1000).toFixed(1)} kB`;
process.stdout.write(
  [
    `Pilot report benchmark: ${reportCount} reports (${customers.length} customers × ${opts.streams} streams, ${opts.sessions} sessions each, ${opts.hours} h: ${Number(opts.hours) * 6} buckets of 10 min), median of ${runs}`,
    `  ${pipeline.manifest.rows.reports.toLocaleString('en-US')} session reports in the snapshot`,
    `  rendering, per report:`,
    `    figures (shared SQL + model)  ${median(perReport.figures).toFixed(1)} ms`,
    ...REPORT_FORMATS.map((f) => `    ${f.padEnd(29)} ${median(perReport[f]).toFixed(2)} ms   (median size ${kb(sizes[f]!)})`),
    `    whole run (${reportCount} reports × 3 formats + index pages, written)  ${(median(wall) / 1000).toFixed(2)} s`,
    `  serving a pre-rendered report (${connections} connections, ${duration} s per measurement):`,
    ...lines,
  ].join('\n') + '\n',
);
await writeResult('reports', { options: opts, reports: reportCount, perReportMs: Object.fromEntries(Object.entries(perReport).map(([k, v]) => [k, median(v)])), wallMs: median(wall), serving });
