// npm run bench:serve -- --warehouse DIR [--duration 10] [--connections 20] [--runs 2] [--swaps 6]
// The API at scale, in one run, on a warehouse with a published snapshot (30 days × 100 streams:
// `generate --hours 720 --sessions 3000 --customers c01,…,c10 --streams 10`, then `pipeline`; run
// under the shared bench lock). The server runs in its own process (`cli serve`), its memory read
// from /proc/<pid>/status all along. Prints: time to ready and RSS at ready; cold and warm
// timeseries latency over every stream, window and standard size; swap latency when CURRENT moves
// between published snapshots (two more are published by `pipeline` when fewer than three exist);
// on-demand sizes, breakdowns (one stream and tenant-wide, cold and repeated), pilot reports and
// exports; peak RSS through all of it; and the hot-route ratios
// against bare node:http and a minimal Koa app.
import fs from 'node:fs/promises';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Command } from 'commander';
import { PROJECT_ROOT } from '../lib/version.ts';
import { writeJsonDurable } from '../lib/fsx.ts';
import { warehouseLayout } from '../warehouse/layout.ts';
import { readCurrent, readHistory, publishedDir, snapshotFiles } from '../warehouse/snapshots/index.ts';
import { readSnapshotManifest } from '../warehouse/snapshots/index.ts';
import { addTenant, findTenant } from '../control/tenants.ts';
import { issueToken, tokenSecret } from '../api/tokens.ts';
import { STANDARD_BUCKET_SECONDS, WINDOW_NAMES } from '../warehouse/figures/index.ts';
import { writeResult } from './report.ts';
import { cpuProfileFlags, startChild, stopChild } from './servers.ts';
import { compareHotRoutes } from './hot-routes.ts';

const opts = new Command()
  .requiredOption('--warehouse <dir>', 'warehouse with a published snapshot')
  .option('--duration <s>', 'seconds of load per hot-route measurement', '10')
  .option('--connections <n>', 'concurrent connections of the hot-route load', '20')
  .option('--runs <k>', 'hot-route measurements of each server', '2')
  .option('--swaps <n>', 'moves of CURRENT between published snapshots', '6')
  .option('--skip-hot', 'skip the hot-route comparison')
  .option('--log-level <level>', "the API's LOG_LEVEL (info: one JSON line per request, as deployed)", 'info')
  .option('--profile <dir>', 'write a CPU profile of the API (node --cpu-prof) into DIR')
  .parse()
  .opts<{ warehouse: string; duration: string; connections: string; runs: string; swaps: string; skipHot?: boolean; logLevel: string; profile?: string }>();

const dir = path.resolve(opts.warehouse);
const layout = warehouseLayout(dir);
const outDir = path.join(PROJECT_ROOT, 'bench', 'output');
await fs.mkdir(outDir, { recursive: true });
const say = (line: string) => process.stderr.write(`${line}\n`);

function cli(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/p2ptel.js', ...args, '--warehouse', dir], { cwd: PROJECT_ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`p2ptel ${args.join(' ')} exited with ${code}`))));
  });
}

// Three published snapshots to move CURRENT between (each a real publication of the full history).
const first = await readCurrent(layout);
if (!first) throw new Error(`no published snapshot in ${dir}: run generate and pipeline first`);
const published = async () => {
  const ids: string[] = [];
  for (const id of await readHistory(layout)) if (await fs.stat(publishedDir(layout, id)).catch(() => null)) ids.push(id);
  return ids;
};
while ((await published()).length < 3) {
  const last = (await readCurrent(layout))!;
  // Five minutes after the last one, or now when that lies ahead of the clock (a warehouse whose
  // history ends now: pipeline refuses an asOf more than AS_OF_MAX_SKEW_SECONDS ahead).
  const asOf = new Date(Math.max(Math.min(Date.parse(last.asOf) + 5 * 60_000, Date.now()), Date.parse(last.asOf) + 1000)).toISOString();
  say(`publishing another snapshot (pipeline --as-of ${asOf}) to swap between`);
  await cli(['pipeline', '--as-of', asOf]);
}
const snapshots = (await published()).slice(-3);
const latest = (await readCurrent(layout))!;
const manifest = await readSnapshotManifest(snapshotFiles(publishedDir(layout, latest.snapshot)).manifest);
const customers = manifest.partitions.map((p) => p.customerId).sort();

const secret = await tokenSecret(layout, null);
const operator = await issueToken(secret, { role: 'operator' }, 7200);
const tenant =
  (await findTenant(layout, customers[0]!)) ??
  (await addTenant(layout, { customerId: customers[0]!, name: customers[0]!, cdnPricePerGb: null, savingsSharePct: 25 }));
const tenantToken = await issueToken(secret, { role: 'tenant', tenant }, 7200);

// --- Start: time to ready and RSS at ready.
const started = performance.now();
const api = await startChild(outDir, ['bin/p2ptel.js', 'serve', '--warehouse', dir, '--port', '0'], /API listening on (\S+)/, { LOG_LEVEL: opts.logLevel }, cpuProfileFlags(opts.profile));
const readyMs = performance.now() - started;
const pid = api.child.pid!;
type StatusField = 'VmRSS' | 'VmHWM' | 'RssAnon' | 'RssFile';
async function statusFields(): Promise<Record<StatusField, number>> {
  const text = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const mb = (field: StatusField) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)![1]) / 1024;
  return { VmRSS: mb('VmRSS'), VmHWM: mb('VmHWM'), RssAnon: mb('RssAnon'), RssFile: mb('RssFile') };
}
async function status(field: StatusField): Promise<number> {
  return (await statusFields())[field];
}
const readyRss = await status('VmRSS');
let sampledPeak = readyRss;
const phasePeaks: Record<string, number> = {};
/** At each phase's peak RSS, its anonymous part (the heaps: V8's and DuckDB's) and its file-mapped part (code). */
const phasePeakParts: Record<string, { anon: number; file: number }> = {};
let phase = 'start';
const sampler = setInterval(() => {
  void statusFields()
    .then((f) => {
      sampledPeak = Math.max(sampledPeak, f.VmRSS);
      if (f.VmRSS > (phasePeaks[phase] ?? 0)) {
        phasePeaks[phase] = f.VmRSS;
        phasePeakParts[phase] = { anon: Math.round(f.RssAnon), file: Math.round(f.RssFile) };
      }
    })
    .catch(() => {});
}, 25);
say(`ready after ${readyMs.toFixed(0)} ms, RSS ${readyRss.toFixed(0)} MB`);

const headers = { Authorization: `Bearer ${operator}` };
async function timed(url: string, as: Record<string, string> = headers): Promise<{ ms: number; status: number; bytes: number }> {
  const t = performance.now();
  const res = await fetch(url, { headers: as });
  const bytes = (await res.arrayBuffer()).byteLength;
  return { ms: performance.now() - t, status: res.status, bytes };
}
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const describe = (xs: number[]) => ({ n: xs.length, p50: +pct(xs, 50).toFixed(1), p99: +pct(xs, 99).toFixed(1), max: +pct(xs, 100).toFixed(1) });

const streams = (
  (await (await fetch(`${api.url}/telemetry/streams?window=all`, { headers })).json()) as { streams: string[] }
).streams;
const seriesUrls = streams.flatMap((s) =>
  STANDARD_BUCKET_SECONDS.flatMap((b) => WINDOW_NAMES.map((w) => `${api.url}/telemetry/timeseries?streamId=${encodeURIComponent(s)}&window=${w}&bucketSeconds=${b}`)),
);

/**
 * Every series, one request at a time, each asked twice in a row: the first is cold (nothing
 * cached for that stream, size and window), the second warm (the response cache's bounded size
 * cannot hold a whole sweep, so a later pass would be cold again). 400s (too many buckets) apart.
 */
async function sweep(urls: string[]): Promise<{ cold: number[]; warm: number[]; refused: number[]; coldBySeries: Map<string, number[]> }> {
  const out = { cold: [] as number[], warm: [] as number[], refused: [] as number[], coldBySeries: new Map<string, number[]>() };
  for (const u of urls) {
    const first = await timed(u);
    if (first.status === 400) {
      out.refused.push(first.ms);
      continue;
    }
    if (first.status !== 200) throw new Error(`${u}: ${first.status}`);
    out.cold.push(first.ms);
    // By window and size (the URL's own parameters), to see which answers make the tail.
    const q = new URL(u).searchParams;
    const group = `${q.get('window')}/${q.get('bucketSeconds')}`;
    out.coldBySeries.set(group, [...(out.coldBySeries.get(group) ?? []), first.ms]);
    const again = await timed(u);
    if (again.status !== 200) throw new Error(`${u}: ${again.status}`);
    out.warm.push(again.ms);
  }
  return out;
}

// --- Timeseries: cold (first request of each stream, size and window), then warm.
phase = 'sweep';
const series = await sweep(seriesUrls);
const cold = { ms: series.cold, refused: series.refused.length, refusedMs: series.refused };
const warm = { ms: series.warm };
say(`cold timeseries: ${JSON.stringify(describe(cold.ms))}, ${cold.refused} refused (> 10 000 buckets)`);
say(`warm timeseries: ${JSON.stringify(describe(warm.ms))}`);
// The window and size groups with the slowest cold answers (what the p99 is made of).
const slowestSeries = [...series.coldBySeries]
  .map(([group, ms]) => ({ group, ...describe(ms) }))
  .sort((a, b) => b.p50 - a.p50)
  .slice(0, 5);
const metricsUrls = streams.flatMap((s) => WINDOW_NAMES.map((w) => `${api.url}/telemetry/metrics/${encodeURIComponent(s)}?window=${w}`));
const metricsWarm = { ms: (await sweep(metricsUrls)).warm };
say(`warm /telemetry/metrics/:streamId: ${JSON.stringify(describe(metricsWarm.ms))}`);

// Warm series against the same bytes from a bare node:http server: a warm answer's time is that of
// moving its body (up to 1.5 MB), which /telemetry/metrics's small bodies do not show. The series
// of 10 streams, each asked of the API until cached, then timed on the API and on the bare server
// one after the other.
const sampleUrls = streams.slice(0, 10).flatMap((s) =>
  STANDARD_BUCKET_SECONDS.flatMap((b) => WINDOW_NAMES.map((w) => `/telemetry/timeseries?streamId=${encodeURIComponent(s)}&window=${w}&bucketSeconds=${b}`)),
);
const canned: Record<string, { status: number; headers: Record<string, string>; body: string }> = {};
for (const u of sampleUrls) {
  const res = await fetch(`${api.url}${u}`, { headers });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) continue; // more than 10 000 buckets
  canned[u] = { status: 200, headers: { 'content-type': res.headers.get('content-type')!, etag: res.headers.get('etag')! }, body: body.toString('base64') };
}
const cannedFile = path.join(outDir, 'canned-series.json');
await fs.writeFile(cannedFile, JSON.stringify(canned));
const bareSeries = await startChild(outDir, ['bin/run-ts.js', 'bench/bare-server.ts', cannedFile], /^(http:\S+)/m);
const warmVsBare = { api: [] as number[], bare: [] as number[] };
for (let round = 0; round < 2; round++) {
  for (const u of Object.keys(canned)) {
    await timed(`${api.url}${u}`); // cached again if the bounded cache let it go
    const a = await timed(`${api.url}${u}`);
    const b = await timed(`${bareSeries.url}${u}`);
    if (round === 0) continue; // the first round warms both ends' connections and code
    warmVsBare.api.push(a.ms);
    warmVsBare.bare.push(b.ms);
  }
}
await stopChild(bareSeries);
await fs.rm(cannedFile, { force: true });
const warmSeriesVsBare = { api: describe(warmVsBare.api), bare: describe(warmVsBare.bare) };
say(`warm timeseries, same bytes: API ${JSON.stringify(warmSeriesVsBare.api)}, bare node:http ${JSON.stringify(warmSeriesVsBare.bare)}`);

// --- Swaps: CURRENT moves between published snapshots; served once /readyz names the new one.
phase = 'swaps';
const swapMs: number[] = [];
const afterSwapCold: number[] = [];
let notInSnapshot = 0;
const order = [...snapshots.filter((id) => id !== latest.snapshot), latest.snapshot];
for (let i = 0; i < Number(opts.swaps); i++) {
  const id = order[i % order.length]!;
  const current = (await readCurrent(layout))!;
  const target = id === current.snapshot ? order[(i + 1) % order.length]! : id;
  const m = await readSnapshotManifest(snapshotFiles(publishedDir(layout, target)).manifest);
  const moved = performance.now();
  await writeJsonDurable(layout.currentPointer, { snapshot: target, asOf: m.asOf, publishedAt: new Date().toISOString() });
  for (;;) {
    const r = (await (await fetch(`${api.url}/readyz`)).json()) as { snapshot?: string };
    if (r.snapshot === target) break;
    if (performance.now() - moved > 60_000) throw new Error(`not served within 60 s: ${target}`);
    await new Promise((res) => setTimeout(res, 5));
  }
  swapMs.push(performance.now() - moved);
  // The first requests after a swap are cold: a dashboard's worth (20 streams × 3 series).
  const sample = streams.slice((i * 20) % streams.length, ((i * 20) % streams.length) + 20);
  for (const s of sample) {
    for (const [w, b] of [['24h', 600], ['7d', 3600], ['1h', 60]] as const) {
      const r = await timed(`${api.url}/telemetry/timeseries?streamId=${encodeURIComponent(s)}&window=${w}&bucketSeconds=${b}`);
      // A stream that began after an older snapshot's asOf is not in it (a live warehouse).
      if (r.status === 404) {
        notInSnapshot++;
        continue;
      }
      if (r.status !== 200) throw new Error(`after swap: ${r.status}`);
      afterSwapCold.push(r.ms);
    }
  }
}
say(`swap latency ms: ${swapMs.map((x) => x.toFixed(0)).join(', ')}; cold after swap ${JSON.stringify(describe(afterSwapCold))}${notInSnapshot > 0 ? ` (${notInSnapshot} requests of streams not in that snapshot: 404)` : ''}`);
// Back to the newest snapshot, as published.
await writeJsonDurable(layout.currentPointer, latest);
for (let i = 0; i < 2000; i++) {
  const r = (await (await fetch(`${api.url}/readyz`)).json()) as { snapshot?: string };
  if (r.snapshot === latest.snapshot) break;
  await new Promise((res) => setTimeout(res, 5));
}

// --- Heavier reads within the same memory: on-demand sizes, pilot reports, exports.
phase = 'on-demand sizes';
const onDemand: number[] = [];
for (const s of streams.slice(0, 6)) {
  for (const [w, b] of [['all', 900], ['7d', 120]] as const) {
    const r = await timed(`${api.url}/telemetry/timeseries?streamId=${encodeURIComponent(s)}&window=${w}&bucketSeconds=${b}`);
    if (r.status !== 200) throw new Error(`on-demand: ${r.status}`);
    onDemand.push(r.ms);
  }
}
say(`on-demand sizes: ${JSON.stringify(describe(onDemand))}`);
// The series with quality figures (quality=true, what a portal stream page reads: 7d at 600 s),
// computed on demand from the stream's raw files, first then repeated (the cache), beside the
// same stream's plain series at that size (from the snapshot's files) in the same run.
phase = 'quality series';
const quality = { cold: [] as number[], repeated: [] as number[], plain: [] as number[] };
for (const s of streams.slice(6, 12)) {
  const url = `${api.url}/telemetry/timeseries?streamId=${encodeURIComponent(s)}&window=7d&bucketSeconds=600`;
  for (const [into, q] of [[quality.plain, ''], [quality.cold, '&quality=true'], [quality.repeated, '&quality=true']] as const) {
    const r = await timed(`${url}${q}`);
    if (r.status !== 200) throw new Error(`quality series: ${r.status}`);
    into.push(r.ms);
  }
}
const qualitySeries = Object.fromEntries(Object.entries(quality).map(([k, xs]) => [k, describe(xs)]));
say(`quality series: ${JSON.stringify(qualitySeries)}`);
// --- Breakdowns (on demand from the snapshot's session classes): one stream over 30d, every
// stream, each asked twice (cold, then repeated: the response cache); the tenant's streams
// together over 30d, every `by` with and without filters; the platform (operator) over 30d.
phase = 'breakdowns';
const DIMS = ['cohort', 'contentType', 'device', 'region', 'sdkVersion', 'signalingVersion'];
const breakdown = { streamCold: [] as number[], streamRepeated: [] as number[], tenantCold: [] as number[], tenantRepeated: [] as number[], platformCold: [] as number[] };
async function twice(url: string, as: Record<string, string>, cold: number[], repeated: number[]): Promise<void> {
  const first = await timed(url, as);
  if (first.status !== 200) throw new Error(`breakdown ${url}: ${first.status}`);
  cold.push(first.ms);
  const again = await timed(url, as);
  if (again.status !== 200) throw new Error(`breakdown ${url}: ${again.status}`);
  repeated.push(again.ms);
}
for (const [i, s] of streams.entries()) {
  await twice(`${api.url}/telemetry/breakdown?by=${DIMS[i % DIMS.length]}&window=30d&streamId=${encodeURIComponent(s)}`, headers, breakdown.streamCold, breakdown.streamRepeated);
}
const asTenant = { Authorization: `Bearer ${tenantToken}` };
for (const by of DIMS) {
  for (const filter of ['', '&filter=!region:eu-west', '&filter=device:mobile&filter=device:tablet&filter=cohort:p2p']) {
    await twice(`${api.url}/telemetry/breakdown?by=${by}&window=30d${filter}`, asTenant, breakdown.tenantCold, breakdown.tenantRepeated);
  }
}
for (const by of DIMS) {
  const r = await timed(`${api.url}/telemetry/breakdown?by=${by}&window=30d`);
  if (r.status !== 200) throw new Error(`platform breakdown: ${r.status}`);
  breakdown.platformCold.push(r.ms);
}
const breakdowns = Object.fromEntries(Object.entries(breakdown).map(([k, xs]) => [k, describe(xs)]));
say(`breakdowns: ${JSON.stringify(breakdowns)}`);
phase = 'pilot reports';
const reports: number[] = [];
for (const s of streams.slice(10, 14)) {
  for (const q of ['format=json&bucketSeconds=900', 'format=html&bucketSeconds=900', 'format=md&bucketSeconds=600']) {
    const r = await timed(`${api.url}/control/reports/pilot/${encodeURIComponent(s)}?${q}`);
    if (r.status !== 200) throw new Error(`pilot report: ${r.status}`);
    reports.push(r.ms);
  }
}
say(`pilot reports: ${JSON.stringify(describe(reports))}`);
phase = 'exports';
const exports: { ms: number; bytes: number }[] = [];
for (const [s, f] of [[streams[20]!, 'ndjson'], [streams[21]!, 'csv'], [streams[22]!, 'parquet']] as const) {
  const r = await timed(`${api.url}/telemetry/export?streamId=${encodeURIComponent(s)}&window=all&format=${f}`);
  if (r.status !== 200) throw new Error(`export: ${r.status}`);
  exports.push({ ms: r.ms, bytes: r.bytes });
}
say(`exports (all history): ${exports.map((e) => `${(e.bytes / 2 ** 20).toFixed(0)} MB in ${(e.ms / 1000).toFixed(1)} s`).join(', ')}`);
phase = 'concurrent sweep';
// Four clients at once over the series of 30 streams of the newest snapshot (cold again after the swaps).
const queue = seriesUrls.slice(0, 30 * STANDARD_BUCKET_SECONDS.length * WINDOW_NAMES.length);
const concurrent: number[] = [];
await Promise.all(
  Array.from({ length: 4 }, async () => {
    for (let u = queue.shift(); u !== undefined; u = queue.shift()) {
      const r = await timed(u);
      if (r.status === 200) concurrent.push(r.ms);
    }
  }),
);
say(`concurrent sweep (4 clients, 30 streams): ${JSON.stringify(describe(concurrent))}`);

// --- Hot routes.
phase = 'hot routes';
const hot = opts.skipHot
  ? null
  : await compareHotRoutes({
      apiUrl: api.url,
      apiPid: api.child.pid,
      token: tenantToken,
      // A stream of the token's own customer (ids sort as strings: c10:… comes before c1:…).
      routes: [`/telemetry/metrics/${encodeURIComponent(streams.find((s) => s.startsWith(`${customers[0]!}:`))!)}?window=24h`, '/telemetry/streams?detail=1'],
      dir: outDir,
      connections: Number(opts.connections),
      duration: Number(opts.duration),
      runs: Number(opts.runs),
    });

clearInterval(sampler);
// What the API's JavaScript holds at the end (its caches are full by then), from its own /metrics.
const heapMb = Object.fromEntries(
  (await (await fetch(`${api.url}/metrics`, { headers })).text())
    .split('\n')
    .map((l) => /^p2ptel_nodejs_(heap_size_total|heap_size_used|external_memory)_bytes (\d+)/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1]!, Math.round(Number(m[2]) / 2 ** 20)]),
);
const peakRss = Math.max(sampledPeak, await status('VmHWM'));
api.child.kill('SIGTERM');

const rounded = Object.fromEntries(Object.entries(phasePeaks).map(([k, v]) => [k, Math.round(v)]));
const result = {
  warehouse: dir,
  reports: manifest.rows.reports,
  streams: streams.length,
  snapshots,
  readyMs: Math.round(readyMs),
  rssAtReadyMb: Math.round(readyRss),
  peakRssMb: Math.round(peakRss),
  peakRssByPhaseMb: rounded,
  peakRssPartsByPhaseMb: phasePeakParts,
  jsHeapAtEndMb: heapMb,
  swapMs: swapMs.map((x) => Math.round(x)),
  timeseries: { cold: describe(cold.ms), slowestColdSeries: slowestSeries, warm: describe(warm.ms), refused: cold.refused, refusedMs: describe(cold.refusedMs), afterSwapCold: describe(afterSwapCold), concurrent4: describe(concurrent) },
  metricsWarm: describe(metricsWarm.ms),
  warmSeriesVsBare,
  onDemand: describe(onDemand),
  qualitySeries,
  breakdowns,
  pilotReports: describe(reports),
  exports,
  hotRoutes: hot?.results ?? null,
};
const lines = [
  `serve benchmark: ${dir} (${streams.length} streams, ${customers.length} customers)`,
  `  start        ready after ${result.readyMs} ms, RSS at ready ${result.rssAtReadyMb} MB`,
  `  peak RSS     ${result.peakRssMb} MB (goal ≤ 400 MB: ${result.peakRssMb <= 400 ? 'met' : 'NOT met'}); by phase ${JSON.stringify(rounded)}`,
  `               anonymous/file-mapped at each phase's peak ${JSON.stringify(phasePeakParts)}; JavaScript at the end (MB) ${JSON.stringify(heapMb)}`,
  `  swaps        ${result.swapMs.join(', ')} ms from CURRENT moving to served (goal ≤ 2000 ms: ${Math.max(...result.swapMs) <= 2000 ? 'met' : 'NOT met'})`,
  `  timeseries   cold p50 ${result.timeseries.cold.p50} ms p99 ${result.timeseries.cold.p99} ms (goal p99 ≤ 50 ms: ${result.timeseries.cold.p99 <= 50 ? 'met' : 'NOT met'}; n ${result.timeseries.cold.n}, ${result.timeseries.refused} refused as > 10 000 buckets)`,
  `               slowest cold, window/size p50 (max): ${slowestSeries.map((g) => `${g.group} ${g.p50} (${g.max}) ms`).join(', ')}`,
  `               warm p50 ${result.timeseries.warm.p50} ms p99 ${result.timeseries.warm.p99} ms; warm /telemetry/metrics/:streamId p50 ${result.metricsWarm.p50} ms p99 ${result.metricsWarm.p99} ms`,
  `               warm, same bodies (10 streams): API p50 ${warmSeriesVsBare.api.p50} ms p99 ${warmSeriesVsBare.api.p99} ms; bare node:http p50 ${warmSeriesVsBare.bare.p50} ms p99 ${warmSeriesVsBare.bare.p99} ms`,
  `               cold after a swap p50 ${result.timeseries.afterSwapCold.p50} ms p99 ${result.timeseries.afterSwapCold.p99} ms; 4 concurrent clients, cold p50 ${result.timeseries.concurrent4.p50} ms p99 ${result.timeseries.concurrent4.p99} ms`,
  `  on demand    p50 ${result.onDemand.p50} ms, max ${result.onDemand.max} ms (sizes 900 s over all, 120 s over 7d)`,
  `  quality      7d at 600 s with quality=true: first p50 ${qualitySeries['cold']!.p50} ms (max ${qualitySeries['cold']!.max}), repeated p50 ${qualitySeries['repeated']!.p50} ms; the plain series p50 ${qualitySeries['plain']!.p50} ms (${(qualitySeries['cold']!.p50 / Math.max(0.01, qualitySeries['plain']!.p50)).toFixed(1)}× first, ${(qualitySeries['repeated']!.p50 / Math.max(0.01, qualitySeries['plain']!.p50)).toFixed(1)}× repeated)`,
  `  breakdowns   one stream 30d: cold p99 ${breakdowns['streamCold']!.p99} ms (goal ≤ 50 ms: ${breakdowns['streamCold']!.p99 <= 50 ? 'met' : 'NOT met'}), repeated p99 ${breakdowns['streamRepeated']!.p99} ms (goal ≤ 5 ms: ${breakdowns['streamRepeated']!.p99 <= 5 ? 'met' : 'NOT met'})`,
  `               tenant-wide 30d: cold p99 ${breakdowns['tenantCold']!.p99} ms (goal ≤ 200 ms: ${breakdowns['tenantCold']!.p99 <= 200 ? 'met' : 'NOT met'}), repeated p99 ${breakdowns['tenantRepeated']!.p99} ms; platform 30d cold p50 ${breakdowns['platformCold']!.p50} ms, max ${breakdowns['platformCold']!.max} ms; peak RSS of the phase ${rounded['breakdowns'] ?? '?'} MB`,
  `  pilot        p50 ${result.pilotReports.p50} ms, max ${result.pilotReports.max} ms (rendered on demand)`,
  `  exports      ${exports.map((e) => `${(e.bytes / 2 ** 20).toFixed(0)} MB in ${(e.ms / 1000).toFixed(1)} s`).join(', ')}`,
  ...(hot ? ['  hot routes', ...hot.lines] : []),
];
process.stdout.write(`${lines.join('\n')}\n`);
await writeResult('serve', result);
