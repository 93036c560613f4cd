// npm run bench:live -- [--dir DIR] [--days 30] [--customers 10] [--streams 10] [--sessions 1350] [--rate 5000] [--probes 30] [--probe-every 3]
// End-to-end freshness of the embedded default (`p2ptel start`): the time from the collector's
// acknowledgement of a report to the first API answer that counts it (issue 30's figure; goal p95 ≤
// 10 s). Over generated history (30 days × 100 streams by default, ending now, generated once by
// `cli generate` into DIR), `start` runs in its own process; a background load posts `--rate`
// reports/s to its collector (batches of 100, evenly spaced), and every `--probe-every` seconds a
// probe posts one report of a stream never seen before and polls `/telemetry/streams?window=1h`
// until the stream is listed. Prints freshness p50/p95/max, the inline rollups' durations (from
// start's own lines) and start's peak RSS (VmHWM).
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Command } from 'commander';
import { PROJECT_ROOT } from '../lib/version.ts';
import { warehouseLayout } from '../warehouse/layout.ts';
import { discoverLanding } from '../warehouse/landing.ts';
import { writeResult } from './report.ts';

const opts = new Command()
  .option('--dir <dir>', 'warehouse folder (history generated into it when empty)', path.join(PROJECT_ROOT, 'bench', 'output', 'live'))
  .option('--days <n>', 'days of history', '30')
  .option('--customers <n>', 'customers', '10')
  .option('--streams <n>', 'streams per customer', '10')
  .option('--sessions <n>', 'sessions per stream over the period', '1350')
  .option('--rate <n>', 'background reports per second', '5000')
  .option('--probes <n>', 'probes', '30')
  .option('--probe-every <s>', 'seconds between probes', '3')
  .parse()
  .opts<{ dir: string; days: string; customers: string; streams: string; sessions: string; rate: string; probes: string; probeEvery: string }>();

const dir = path.resolve(opts.dir);
const HOUR = 3_600_000;
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

async function ensureHistory(): Promise<void> {
  if ((await discoverLanding(warehouseLayout(dir))).files.length > 0) return;
  const days = Number(opts.days);
  const customers = Array.from({ length: Number(opts.customers) }, (_, i) => `c${i + 1}`);
  const end = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  process.stderr.write(`generating ${days} days × ${customers.length * Number(opts.streams)} streams into ${dir} ...\n`);
  await promisify(execFile)(
    process.execPath,
    [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'generate', '--warehouse', dir, '--customers', customers.join(','), '--streams', opts.streams,
      '--sessions', opts.sessions, '--start', new Date(end - days * 24 * HOUR).toISOString(), '--hours', String(days * 24), '--seed', '11'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
}

interface Started {
  child: ReturnType<typeof spawn>;
  output: () => string;
  api: string;
  token: string;
  collector: string;
  key: string;
  customer: string;
}

/** `p2ptel start` on the warehouse, once it prints its live line: its URLs, token and ingest key. */
async function startStart(): Promise<Started> {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'start', '--warehouse', dir, '--port', '0', '--collector-port', '0'], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  process.once('exit', () => child.kill());
  for (let i = 0; i < 6000 && !/^live: a rollup runs/m.test(out); i++) {
    if (child.exitCode !== null) throw new Error(`start exited ${child.exitCode}: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const lines = out.split('\n');
  const after = (re: RegExp) => lines[lines.findIndex((l) => re.test(l)) + 1]!.trim();
  return {
    child,
    output: () => out,
    api: /API listening on (\S+)/.exec(out)![1]!,
    token: after(/its token, valid/),
    collector: /collector of SDK reports listening on (\S+);/.exec(out)![1]!,
    key: after(/ingest key of \S+ \(public/),
    customer: /ingest key of (\S+) \(public/.exec(out)![1]!,
  };
}

function report(streamId: string, id: string, ts: Date): Record<string, unknown> {
  return {
    reportId: id, sessionId: `s-${id}`, streamId, ts: ts.toISOString(), intervalMs: 30_000, seq: 0, final: false, cohort: 'p2p', contentType: 'live',
    bytesOffloaded: 3_000_000, bytesFallback: 1_000_000, peerCount: 3, bufferHealth: 12.5, watchMs: 30_000, startupMs: 900, device: 'desktop', region: 'eu-west',
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
function post(url: string, key: string, reports: Record<string, unknown>[]): Promise<number> {
  const body = gzipSync(JSON.stringify({ reports }));
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v1/session-reports`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'X-Ingest-Key': key } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** `rate` reports/s in batches of 100, evenly spaced, until `stop` says so. */
async function backgroundLoad(s: Started, rate: number, stop: () => boolean): Promise<{ sent: number; refused: number }> {
  const perSecond = Math.max(1, Math.round(rate / 100));
  let sent = 0;
  let refused = 0;
  let n = 0;
  const started = Date.now();
  const inflight = new Set<Promise<void>>();
  while (!stop()) {
    const due = started + (n * 1000) / perSecond;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    const batch = Array.from({ length: 100 }, (_, i) => report(`${s.customer}:live-${(n + i) % 10}`, `bg-${started}-${n}-${i}`, new Date()));
    n++;
    const p = post(s.collector, s.key, batch).then(
      (status) => void (status === 202 ? (sent += 100) : refused++),
      () => void refused++,
    );
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  }
  await Promise.all(inflight);
  return { sent, refused };
}

/** One probe: a report of a new stream, then polls until the API lists it; ms from the 202. */
async function probe(s: Started, n: number): Promise<number> {
  const streamId = `${s.customer}:probe-${Date.now()}-${n}`;
  const status = await post(s.collector, s.key, [report(streamId, `probe-${streamId}`, new Date())]);
  const acked = performance.now();
  if (status !== 202) throw new Error(`probe ${n} answered ${status}`);
  for (;;) {
    const res = await fetch(`${s.api}/telemetry/streams?window=1h`, { headers: { Authorization: `Bearer ${s.token}` } });
    const body = (await res.json()) as { streams: string[] };
    if (body.streams.includes(streamId)) return performance.now() - acked;
    if (performance.now() - acked > 180_000) throw new Error(`probe ${n} not counted after 180 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

await ensureHistory();
process.stderr.write('starting p2ptel start (a from-scratch rollup and every pilot report first) ...\n');
const s = await startStart();
let stopping = false;
const load = backgroundLoad(s, Number(opts.rate), () => stopping);
const freshness: number[] = [];
const probes: Promise<void>[] = [];
for (let n = 0; n < Number(opts.probes); n++) {
  probes.push(probe(s, n).then((ms) => void freshness.push(ms)));
  await new Promise((r) => setTimeout(r, Number(opts.probeEvery) * 1000));
}
await Promise.all(probes);
stopping = true;
const background = await load;
const status = await fs.readFile(`/proc/${s.child.pid}/status`, 'utf8');
const peakRssMiB = Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)![1]) / 1024);
const exited = new Promise((r) => s.child.once('exit', r));
s.child.kill('SIGINT');
await exited;
const runs = [...s.output().matchAll(/^live: snapshot as of \S+ counts [\d,]+ reports \([^)]*\), rolled up in ([\d.]+) s$/gm)].map((m) => Number(m[1]) * 1000);
const result = {
  mode: 'start',
  history: { days: Number(opts.days), streams: Number(opts.customers) * Number(opts.streams) },
  rate: Number(opts.rate),
  background,
  freshnessMs: { p50: percentile(freshness, 50), p95: percentile(freshness, 95), max: Math.max(...freshness), n: freshness.length },
  rollupsMs: { n: runs.length, p50: percentile(runs, 50), p95: percentile(runs, 95), max: Math.max(...runs) },
  peakRssMiB,
};
const f = result.freshnessMs;
process.stdout.write(
  [
    `live benchmark, start (embedded default): ${result.history.days} days × ${result.history.streams} streams of history, ${result.rate} reports/s in the background (${background.sent} sent, ${background.refused} requests refused)`,
    `  freshness (acknowledgement → first API answer counting it), ${f.n} probes: p50 ${(f.p50 / 1000).toFixed(1)} s, p95 ${(f.p95 / 1000).toFixed(1)} s, max ${(f.max / 1000).toFixed(1)} s (goal p95 ≤ 10 s: ${f.p95 <= 10_000 ? 'met' : 'NOT met'})`,
    `  inline rollups: ${runs.length}, p50 ${(result.rollupsMs.p50 / 1000).toFixed(2)} s, p95 ${(result.rollupsMs.p95 / 1000).toFixed(2)} s, max ${(result.rollupsMs.max / 1000).toFixed(2)} s`,
    `  start's peak RSS ${peakRssMiB} MiB`,
  ].join('\n') + '\n',
);
const file = await writeResult('live', result);
process.stdout.write(`  (${path.relative(PROJECT_ROOT, file)})\n`);
