// npm run bench:ingest -- [--duration 15] [--connections 20] [--batch 500] [--warehouse DIR] [--profile DIR]
// gzip'd batches of realistic generated reports (bodies prepared before the load), posted by
// autocannon in this process from 20 connections, in one run against the real collector (cli
// collect, its own process, default flush policy, per-key limits off) and against a bare node:http
// server that reads, gunzips and JSON.parses the same bodies and answers 202 without storing
// (bench/bare-ingest-server.ts). Then the collector again at 50 % of its sustained rate, for the
// p99 of acknowledgement and whether the flush keeps up (the spool's size sampled from /readyz):
// requests evenly spaced, open loop (bench/paced-load.ts), and, for reference, autocannon's own
// pacing at the same rate, which sends each second's requests in one burst. The spool's group
// commits during the half-rate run come from the collector's own fsync histogram (its metrics
// listener), so that a p99 set by the disk's flush stalls shows as such.
// Prints reports/s, ratios, p99, spool sizes, the collector's CPU per report and full garbage
// collections while saturated (/proc/<pid>/task/*/stat, its metrics), and peak RSS (VmHWM).
// Last, the nesting attack against a collector with the default limits (bench/ingest-attack.ts);
// `--only attack` runs that part alone.
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { createReadStream } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { Command } from 'commander';
import autocannon from 'autocannon';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { PROJECT_ROOT } from '../lib/version.ts';
import { openJobDeps } from '../jobs/deps.ts';
import { generateReports } from '../warehouse/sample/index.ts';
import { warehouseLayout } from '../warehouse/layout.ts';
import { addTenant, findTenant } from '../control/tenants.ts';
import { addIngestKey } from '../control/ingest-keys.ts';
import { writeReportsNdjson } from '../sdk/replay.ts';
import { pacedLoad } from './paced-load.ts';
import { describeAttack, nestingAttack } from './ingest-attack.ts';
import { describeRatio, writeResult } from './report.ts';
import { cpuProfileFlags, startChild as startIn, type ChildServer } from './servers.ts';

const opts = new Command()
  .option('--duration <s>', 'seconds of load per measurement', '15')
  .option('--connections <n>', 'concurrent connections', '20')
  .option('--batch <n>', 'reports per request', '500')
  .option('--warehouse <dir>', 'warehouse folder of the run (its spool and landed files are removed first)', path.join(PROJECT_ROOT, 'bench', 'output', 'ingest-warehouse'))
  .option('--profile <dir>', 'write a CPU profile of the collector (node --cpu-prof) into DIR')
  .option('--only <part>', 'run only this part: attack')
  .parse()
  .opts<{ duration: string; connections: string; batch: string; warehouse: string; profile?: string; only?: string }>();
if (opts.only !== undefined && opts.only !== 'attack') throw new Error(`--only: unknown part ${opts.only} (attack)`);
const duration = Number(opts.duration);
const connections = Number(opts.connections);
const batch = Number(opts.batch);
const dir = path.resolve(opts.warehouse);

// A fresh warehouse each run: a tenant, a key, and realistic bodies from the generator.
await fs.rm(dir, { recursive: true, force: true });
const config = loadConfig({ overrides: { WAREHOUSE_DIR: dir } });
const deps = await openJobDeps(config, silentLogger);
const tenant =
  (await findTenant(deps.layout, 'acme')) ?? (await addTenant(deps.layout, { customerId: 'acme', name: 'Acme', cdnPricePerGb: null, savingsSharePct: 25 }));
const { key } = await addIngestKey(deps.layout, { customer: tenant.customerId, label: 'bench' });
const attacker = await addTenant(deps.layout, { customerId: 'mallory', name: 'Mallory', cdnPricePerGb: null, savingsSharePct: 25 });
const { key: attackerKey } = await addIngestKey(deps.layout, { customer: attacker.customerId, label: 'attack' });
const sampleDir = path.join(dir, 'bench-sample');
const sample = await generateReports(deps.db, warehouseLayout(sampleDir), {
  customers: ['acme'],
  streams: 10,
  sessions: 100,
  start: new Date(Math.floor(Date.now() / 1000) * 1000 - 3 * 3_600_000),
  hours: 3,
  seed: 3,
});
const ndjson = path.join(sampleDir, 'reports.ndjson');
await writeReportsNdjson(deps.db, sample.files, ndjson);
await deps.close();
const bodies: Buffer[] = [];
let lines: string[] = [];
let rawBytes = 0;
for await (const line of readline.createInterface({ input: createReadStream(ndjson, 'utf8'), crlfDelay: Infinity })) {
  if (line === '') continue;
  lines.push(line);
  if (lines.length === batch) {
    const text = `{"reports":[${lines.join(',')}]}`;
    rawBytes += text.length;
    bodies.push(gzipSync(text));
    lines = [];
    if (bodies.length === 60) break;
  }
}
await fs.rm(sampleDir, { recursive: true, force: true });
const gzBytes = bodies.reduce((a, b) => a + b.length, 0);
process.stderr.write(
  `${bodies.length} distinct bodies of ${batch} reports: ${Math.round(gzBytes / bodies.length / 1024)} KiB gzip'd, ${Math.round(rawBytes / bodies.length / 1024)} KiB JSON each\n`,
);

const headers = { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'X-Ingest-Key': key };
interface Load {
  reportsPerSecond: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}
async function load(url: string, seconds: number, overallRate?: number): Promise<Load> {
  const r = await autocannon({
    url,
    connections,
    duration: seconds,
    ...(overallRate ? { overallRate } : {}),
    requests: bodies.map((body) => ({ method: 'POST', path: '/v1/session-reports', headers, body })),
  });
  return {
    requestsPerSecond: r.requests.average,
    reportsPerSecond: r.requests.average * batch,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
  };
}

/** The collector's histogram of spool write + fdatasync (p2ptel_collector_spool_fsync_seconds): bucket bound (s) → count. */
async function fsyncHistogram(metricsUrl: string): Promise<Map<number, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const buckets = new Map<number, number>();
  for (const m of text.matchAll(/^p2ptel_collector_spool_fsync_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)) buckets.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2]));
  return buckets;
}

/** The collector's event-loop garbage collections so far (prom-client's default metrics): kind → count and seconds. */
async function gcTotals(metricsUrl: string): Promise<Map<string, { count: number; seconds: number }>> {
  const text = await (await fetch(metricsUrl)).text();
  const totals = new Map<string, { count: number; seconds: number }>();
  for (const m of text.matchAll(/^p2ptel_nodejs_gc_duration_seconds_(count|sum)\{kind="(\w+)"\} ([\d.e+-]+)$/gm)) {
    const t = totals.get(m[2]!) ?? { count: 0, seconds: 0 };
    if (m[1] === 'count') t.count = Number(m[3]);
    else t.seconds = Number(m[3]);
    totals.set(m[2]!, t);
  }
  return totals;
}

/**
 * CPU time (s) of a process's threads so far, from /proc/<pid>/task/<tid>/stat (utime + stime, in
 * clock ticks of 1/100 s): all of them, and the main thread's (the event loop: its tid is the pid).
 */
async function threadCpu(pid: number): Promise<{ all: number; main: number }> {
  let all = 0;
  let main = 0;
  for (const tid of await fs.readdir(`/proc/${pid}/task`)) {
    const stat = await fs.readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => null);
    if (stat === null) continue; // a thread that ended meanwhile
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const seconds = (Number(fields[11]) + Number(fields[12])) / 100;
    all += seconds;
    if (Number(tid) === pid) main = seconds;
  }
  return { all, main };
}

/** Full collections (V8's mark-compact) on the collector's event loop between two readings. */
function majorGcsDuring(before: Map<string, { count: number; seconds: number }>, after: Map<string, { count: number; seconds: number }>) {
  const a = after.get('major') ?? { count: 0, seconds: 0 };
  const b = before.get('major') ?? { count: 0, seconds: 0 };
  return { count: a.count - b.count, ms: Math.round((a.seconds - b.seconds) * 1000) };
}

/**
 * The spool's group commits during a run, from the histogram before and after: how many, how many
 * took over 50 and 250 ms (the disk's flush stalls: every request waiting for one is answered
 * after it), and the bucket the slowest fell in.
 */
function fsyncDuring(before: Map<number, number>, after: Map<number, number>) {
  const d = (le: number) => (after.get(le) ?? 0) - (before.get(le) ?? 0);
  const total = d(Infinity);
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const slowestBound = bounds.find((le) => d(le) === total) ?? Infinity;
  return { commits: total, over50ms: total - d(0.05), over250ms: total - d(0.25), slowestAtMostMs: slowestBound * 1000 };
}

async function peakRssMiB(server: ChildServer): Promise<number> {
  const status = await fs.readFile(`/proc/${server.child.pid}/status`, 'utf8');
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)![1]) / 1024);
}

/** Sample the collector's spool (bytes not landed, sealed segments) while `fn` runs. */
async function sampled<T>(url: string, fn: () => Promise<T>): Promise<{ result: T; samples: { t: number; bytes: number; sealed: number }[] }> {
  const samples: { t: number; bytes: number; sealed: number }[] = [];
  const started = Date.now();
  let on = true;
  const poll = (async () => {
    while (on) {
      try {
        const res = await fetch(`${url}/readyz`);
        const body = (await res.json()) as { spool?: { bytes: number; sealedSegments: number } };
        if (body.spool) samples.push({ t: Date.now() - started, bytes: body.spool.bytes, sealed: body.spool.sealedSegments });
      } catch {
        /* a missed sample */
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  const result = await fn();
  on = false;
  await poll;
  return { result, samples };
}

const logDir = path.join(PROJECT_ROOT, 'bench', 'output');
await fs.mkdir(logDir, { recursive: true });
/** The other clients' rate during the attack: 10 requests (5,000 reports) a second. */
const ATTACK_VICTIM_RATE = 10;
const runAttack = async () => {
  const attack = await nestingAttack({ warehouse: dir, logDir, key, bodies, attackerKey, seconds: duration, rate: ATTACK_VICTIM_RATE });
  process.stdout.write(`${describeAttack(attack, batch, ATTACK_VICTIM_RATE).join('\n')}\n`);
  return attack;
};
if (opts.only === 'attack') {
  const attack = await runAttack();
  await writeResult('ingest-attack', attack);
  process.exit(attack.goals.p50 && attack.goals.p99 && attack.goals.rss ? 0 : 1);
}
const startChild = (args: string[], ready: RegExp, env: Record<string, string> = {}, nodeFlags: string[] = []) => startIn(logDir, args, ready, env, nodeFlags);

const bare = await startChild(['bin/run-ts.js', 'bench/bare-ingest-server.ts'], /^(http:\S+)/m);
const collector = await startChild(['bin/p2ptel.js', 'collect', '--warehouse', dir, '--port', '0', '--spool', path.join(dir, 'spool', 'bench'), '--metrics-port', '0'], /collector listening on (\S+) .*; metrics on (\S+)/, {
  LOG_LEVEL: 'info',
  // One key saturates the collector here: its per-key limits are off (the attack run has them on).
  COLLECTOR_RATE_LIMIT_REPORTS_PER_SECOND: '0',
  COLLECTOR_INFLATED_BYTES_PER_KEY_PER_SECOND: '0',
  COLLECTOR_CHECK_MS_PER_KEY_PER_SECOND: '0',
}, cpuProfileFlags(opts.profile));

await load(collector.url, 3); // warm-up of both, not measured
await load(bare.url, 3);
const bareRun = await load(bare.url, duration);
process.stderr.write(`bare: ${Math.round(bareRun.reportsPerSecond)} reports/s, p99 ${bareRun.p99} ms\n`);
const gcBefore = await gcTotals(collector.more[0]!);
const cpuBefore = await threadCpu(collector.child.pid!);
const full = await sampled(collector.url, () => load(collector.url, duration));
const cpuAfter = await threadCpu(collector.child.pid!);
const fullGcs = majorGcsDuring(gcBefore, await gcTotals(collector.more[0]!));
// The collector's CPU per report accepted in the saturated run: steadier than reports/s on a shared
// machine (it does not depend on how much of the CPU the collector got). Landing done during the
// run counts; the backlog it leaves does not.
const fullReports = full.result.reportsPerSecond * duration;
const cpuPerReport = {
  allMicros: Math.round(((cpuAfter.all - cpuBefore.all) / fullReports) * 1e8) / 100,
  eventLoopMicros: Math.round(((cpuAfter.main - cpuBefore.main) / fullReports) * 1e8) / 100,
};
process.stderr.write(`collector: ${Math.round(full.result.reportsPerSecond)} reports/s, p99 ${full.result.p99} ms\n`);
// Let the flusher land the backlog of the saturated run before the half-rate one.
for (let i = 0; i < 120; i++) {
  const body = (await (await fetch(`${collector.url}/readyz`)).json()) as { spool: { sealedSegments: number } };
  if (body.spool.sealedSegments === 0) break;
  await new Promise((r) => setTimeout(r, 500));
}
const halfRate = Math.max(1, Math.round(full.result.requestsPerSecond / 2));
const fsyncBefore = await fsyncHistogram(collector.more[0]!);
const paced = await sampled(collector.url, () =>
  pacedLoad(collector.url, {
    rate: halfRate,
    seconds: duration * 2,
    connections,
    requests: bodies.map((body) => ({ method: 'POST', path: '/v1/session-reports', headers, body })),
  }),
);
const fsync = fsyncDuring(fsyncBefore, await fsyncHistogram(collector.more[0]!));
const half = { ...paced, result: { ...paced.result, reportsPerSecond: paced.result.requestsPerSecond * batch } };
process.stderr.write(`collector at ${halfRate * batch} reports/s, evenly spaced: p50 ${half.result.p50} ms, p99 ${half.result.p99} ms\n`);
const bursts = await load(collector.url, duration, halfRate);
process.stderr.write(`collector at ${halfRate * batch} reports/s in autocannon's per-second bursts: p99 ${bursts.p99} ms\n`);

const rss = { collector: await peakRssMiB(collector), bare: await peakRssMiB(bare) };
collector.child.kill('SIGTERM');
bare.child.kill('SIGTERM');
const stopStarted = Date.now();
await new Promise((r) => (collector.child.exitCode !== null ? r(null) : collector.child.once('exit', r)));
const finalFlushMs = Date.now() - stopStarted;

const third = (xs: { bytes: number }[], part: 0 | 2) => {
  const n = Math.max(1, Math.floor(xs.length / 3));
  const slice = part === 0 ? xs.slice(0, n) : xs.slice(-n);
  return Math.max(...slice.map((x) => x.bytes));
};
const halfSamples = half.samples;
/** How fast the spool grew during a run (least squares over its samples), bytes per second. */
function growth(xs: { t: number; bytes: number }[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mt = xs.reduce((a, x) => a + x.t, 0) / n;
  const mb = xs.reduce((a, x) => a + x.bytes, 0) / n;
  const cov = xs.reduce((a, x) => a + (x.t - mt) * (x.bytes - mb), 0);
  const vt = xs.reduce((a, x) => a + (x.t - mt) ** 2, 0);
  return vt === 0 ? 0 : (cov / vt) * 1000;
}
const fullGrowth = growth(full.samples);
const spool = {
  fullRateMaxMiB: Math.round(Math.max(...full.samples.map((s) => s.bytes)) / 2 ** 20),
  fullRateGrowthMiBps: Math.round(fullGrowth / 2 ** 20),
  fullRateSecondsToLimit: fullGrowth > 0 ? Math.round(config.collector.spoolMaxBytes / fullGrowth) : null,
  halfRateMaxMiB: Math.round(Math.max(...halfSamples.map((s) => s.bytes)) / 2 ** 20),
  halfRateFirstThirdMaxMiB: Math.round(third(halfSamples, 0) / 2 ** 20),
  halfRateLastThirdMaxMiB: Math.round(third(halfSamples, 2) / 2 ** 20),
  halfRateMaxSealedSegments: Math.max(...halfSamples.map((s) => s.sealed)),
};
const failures = full.result.non2xx + full.result.errors + half.result.non2xx + half.result.errors + bursts.non2xx + bursts.errors + bareRun.non2xx + bareRun.errors;
const ratio = full.result.reportsPerSecond / bareRun.reportsPerSecond;
// Keeping up: the spool no larger in the last third of the run than in the first, and at most two
// sealed segments waiting (one landing, and the next, sealed on time while it lands).
const keepsUp = spool.halfRateMaxSealedSegments <= 2 && spool.halfRateLastThirdMaxMiB <= spool.halfRateFirstThirdMaxMiB * 1.5 + 1;
const out = [
  `ingest benchmark: ${connections} connections, ${batch} reports per gzip'd request, ${duration} s per measurement`,
  `  bare node:http (gunzip + JSON.parse, no storage)  ${Math.round(bareRun.reportsPerSecond)} reports/s  p99 ${bareRun.p99} ms  peak RSS ${rss.bare} MiB`,
  `  collector (validate + fsync'd spool + flush)      ${Math.round(full.result.reportsPerSecond)} reports/s  p99 ${full.result.p99} ms  peak RSS ${rss.collector} MiB`,
  `    ${full.result.reportsPerSecond >= 50_000 ? 'goal ≥ 50,000 reports/s: met' : 'goal ≥ 50,000 reports/s: NOT met'}`,
  `    ${describeRatio('reports/s, collector / bare', ratio, 0.5, false)}`,
  `    the collector's CPU per report meanwhile: ${cpuPerReport.allMicros} µs, all threads (the event loop ${cpuPerReport.eventLoopMicros} µs); its event loop ran ${fullGcs.count} full garbage collections (${fullGcs.ms} ms of pauses)`,
  `  collector at 50 % (${halfRate * batch} reports/s offered evenly, open loop, ${Math.round(half.result.reportsPerSecond)} served, ${duration * 2} s): p50 ${half.result.p50} ms, p99 ${half.result.p99} ms, max ${half.result.max} ms (goal p99 ≤ 50 ms: ${half.result.p99 <= 50 ? 'met' : 'NOT met'})`,
  `    the load generator's own lateness in sending (counted in those latencies): p99 ${half.result.sendLagP99} ms, max ${half.result.sendLagMax} ms`,
  `    the spool's write + fdatasync meanwhile: ${fsync.commits} group commits, ${fsync.over50ms} over 50 ms, ${fsync.over250ms} over 250 ms, slowest ≤ ${fsync.slowestAtMostMs} ms (the disk's flush stalls: every request waiting for one is answered after it)`,
  `    the same rate in autocannon's per-second bursts (${connections} connections each sending its share at once): p50 ${bursts.p50} ms, p99 ${bursts.p99} ms`,
  `    spool not landed: max ${spool.halfRateMaxMiB} MiB (first third ${spool.halfRateFirstThirdMaxMiB} MiB, last third ${spool.halfRateLastThirdMaxMiB} MiB), sealed segments waiting at most ${spool.halfRateMaxSealedSegments}: flush ${keepsUp ? 'keeps up' : 'does NOT keep up'}`,
  `  saturated run: spool peaked at ${spool.fullRateMaxMiB} MiB, growing ${spool.fullRateGrowthMiBps} MiB/s (landing gets the CPU the checks leave and lags the intake; at that growth the ${Math.round(config.collector.spoolMaxBytes / 2 ** 20)} MiB spool limit is reached after ~${spool.fullRateSecondsToLimit} s, and then requests get 503 with Retry-After); SIGTERM → exit (final flush) ${finalFlushMs} ms`,
  `  non-2xx or errors: ${failures}`,
];
process.stdout.write(`${out.join('\n')}\n`);
const attack = await runAttack();
const loadAverage = (await fs.readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
process.stdout.write(`  load average at the end: ${loadAverage}\n`);
const file = await writeResult('ingest', { loadAverage, connections, batch, duration, bare: bareRun, collector: { ...full.result, majorGcs: fullGcs, cpuPerReport }, half: { rate: halfRate * batch, ...half.result, fsync }, bursts, spool, rss, finalFlushMs, ratio, keepsUp, attack });
process.stdout.write(`  (${path.relative(PROJECT_ROOT, file)})\n`);
if (failures > 0) process.exitCode = 1;
