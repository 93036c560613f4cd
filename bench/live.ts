// npm run bench:live -- [--mode both|start|workers|deploy] [--tiny] [--one-report-sessions] [--cross-hour] [--logs DIR] [--dir DIR] [--days 30] [--customers 10] [--streams 10] [--sessions 1350] [--rate 5000] [--probes 30] [--probe-every 3] [--rollup-every 2s]
// End-to-end freshness of live figures (issue 30's figure; goal p95 ≤ 10 s): the time from the
// collector's acknowledgement of a report to the first API answer that counts it, in two
// deployments over the same generated history (30 days × 100 streams by default, ending now,
// generated once by `cli generate` into DIR):
//   start    the embedded default, `p2ptel start`, in its own process (inline rollups as reports land);
//   workers  the worker tier: a redis-server of the bench's own (a free port), `schedule
//            --rollup-every 2s` (`--rollup-every`; and the compaction job, every 60 s), two `worker` processes, a
//            `collect` and a `serve` process, with the live settings of docs/operations.md.
//   deploy   `start`, then restarts of it as deployments: one whose state SQL differs (the rebuild
//            in the background, docs/warehouse-state.md "After a deployment"; simulated by
//            P2PTEL_TEST_STATE_CODE_SALT), the same with ROLLUP_REBUILD_BUDGET=0 (the blocking
//            rebuild, as before 2026-11-28) and a plain restart, each measured from the restart until
//            no state is stale (freshness, the API's answers every 250 ms, peak RSS), against the
//            first process's steady freshness. `--deploys background,blocking,plain` picks the
//            restarts (`P2PTEL_BUILD=dist-x` runs another build of `p2ptel` under the same bench).
//            Freshness during the rebuild is also given from the moment the live loop runs (the
//            probes posted from then until no state is stale: a restart's catch-up, its first run
//            and pilot reports before the live loop, is not in it), with the process's runs over
//            the same time and the highest RSS sampled then.
//   deploy-workers  the worker tier, steady, then its two workers restarted with other state SQL
//            (P2PTEL_TEST_STATE_CODE_SALT; the collector and the API go on), measured from the
//            restart until CURRENT's snapshot uses no stale state: freshness, runs, the API's
//            answers, the workers' peak RSS.
// In each, a background load posts `--rate` reports/s to the collector (batches of 100, evenly
// spaced) as SDKs do: rate × 30 sessions at once, each reporting every 30 s for 15 minutes
// (`--one-report-sessions`: every report a session of its own, rate new sessions a second), and
// every `--probe-every` seconds a probe posts one report of a stream never seen before and polls
// `/telemetry/streams?window=1h` until the stream is listed. Prints freshness p50/p95/max per
// mode, the rollups' durations, and the peak RSS (VmHWM) of every process: over its whole life,
// once it served its first snapshot (before the load), and the highest RSS sampled under the load. `--tiny`: a day of 4
// streams, 200 reports/s, 4 probes (a check that it runs, in a minute or two; not a measure).
// `--cross-hour`: each mode waits so that its probes' middle falls on a full hour (the first run of
// an hour makes the classes of the class units whose signature changes, and the newly cut hours).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { createWriteStream, mkdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Command } from 'commander';
import { PROJECT_ROOT } from '../lib/version.ts';
import { warehouseLayout } from '../warehouse/layout.ts';
import { discoverLanding } from '../warehouse/landing/index.ts';
import { publishedDir, readCurrent, snapshotFiles } from '../warehouse/snapshots/index.ts';
import { readSnapshotManifest } from '../warehouse/snapshots/index.ts';
import { startRedisServer } from '../test/helpers/redis-server.ts';
import { writeResult } from './report.ts';

const cli = new Command()
  .option('--mode <mode>', 'start, workers, both (one after the other), deploy (restarts of start as deployments), or deploy-workers (the worker tier, then its workers restarted as a deployment)', 'both')
  .option('--tiny', 'small history and a short run: checks the benchmark runs (overrides the sizes below)')
  .option('--dir <dir>', 'warehouse folder (history generated into it when empty); default bench/output/live (live-tiny with --tiny)')
  .option('--days <n>', 'days of history', '30')
  .option('--customers <n>', 'customers', '10')
  .option('--streams <n>', 'streams per customer', '10')
  .option('--sessions <n>', 'sessions per stream over the period', '1350')
  .option('--rate <n>', 'background reports per second', '5000')
  .option('--probes <n>', 'probes', '30')
  .option('--probe-every <s>', 'seconds between probes', '3')
  .option('--rollup-every <duration>', "the worker tier's rollup interval (`schedule --rollup-every`; docs/operations.md's live setting)", '2s')
  .option('--logs <dir>', "keep every process's whole output in <dir>/<name>.log (with P2PTEL_SQL_TRACE=1: each statement's time)")
  .option('--cross-hour', "time each mode's probes so that their middle falls on a full hour (waits for it): the first run of an hour makes more anew")
  .option('--deploys <list>', 'deploy mode: the restarts to measure, in order, of background, blocking, plain', 'background,blocking,plain')
  .option('--one-report-sessions', 'the background load posts every report as a session of its own (rate new sessions a second) instead of sessions reporting every 30 s')
  .parse()
  .opts<{ mode: string; tiny?: boolean; dir?: string; days: string; customers: string; streams: string; sessions: string; rate: string; probes: string; probeEvery: string; rollupEvery: string; oneReportSessions?: boolean; crossHour?: boolean; logs?: string; deploys: string }>();
const TINY = { days: '1', customers: '2', streams: '2', sessions: '40', rate: '200', probes: '4', probeEvery: '2' };
const opts = cli.tiny ? { ...cli, ...TINY } : cli;
if (!['start', 'workers', 'both', 'deploy', 'deploy-workers'].includes(opts.mode)) throw new Error(`--mode: start, workers, both, deploy or deploy-workers, not ${opts.mode}`);

const dir = path.resolve(opts.dir ?? path.join(PROJECT_ROOT, 'bench', 'output', cli.tiny ? 'live-tiny' : 'live'));
const layout = warehouseLayout(dir);
if (opts.logs) mkdirSync(opts.logs, { recursive: true });
const bin = path.join(PROJECT_ROOT, 'bin/p2ptel.js');
const HOUR = 3_600_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

async function ensureHistory(): Promise<void> {
  if ((await discoverLanding(layout)).files.length > 0) return;
  const days = Number(opts.days);
  const customers = Array.from({ length: Number(opts.customers) }, (_, i) => `c${i + 1}`);
  const end = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  process.stderr.write(`generating ${days} days × ${customers.length * Number(opts.streams)} streams into ${dir} ...\n`);
  await promisify(execFile)(
    process.execPath,
    [bin, 'generate', '--warehouse', dir, '--customers', customers.join(','), '--streams', opts.streams,
      '--sessions', opts.sessions, '--start', new Date(end - days * 24 * HOUR).toISOString(), '--hours', String(days * 24), '--seed', '11'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
}

/** Where the probes and the load go: the API (and a token it takes), the collector (and an ingest key). */
interface Target {
  api: string;
  token: string;
  collector: string;
  key: string;
  customer: string;
}

/** A process of the benchmark, its output kept. */
interface Proc {
  name: string;
  child: ChildProcess;
  output: () => string;
}

/** With P2PTEL_BUILD (another build of `p2ptel`, e.g. the code before a change): that build, not the sources that bin/run-ts.js's P2PTEL_FROM_SOURCE would run. */
function ofBuild(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!env['P2PTEL_BUILD']) return env;
  const { P2PTEL_FROM_SOURCE: _fromSource, ...rest } = env;
  return rest;
}

function launch(name: string, args: string[], env: NodeJS.ProcessEnv = process.env): Proc {
  const child = spawn(process.execPath, [bin, ...args], { cwd: PROJECT_ROOT, env: ofBuild(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  // Only the tail: a worker's logs over minutes would be large.
  const log = opts.logs ? createWriteStream(path.join(opts.logs, `${name.replace(/\s+/g, '-')}.log`)) : null;
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-200_000);
    log?.write(d);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  process.once('exit', () => child.kill('SIGKILL'));
  return { name, child, output: () => out };
}

/** Resolves with `re`'s first match in the process's output. */
async function waitForOutput(p: Proc, re: RegExp, timeoutMs = 600_000): Promise<RegExpExecArray> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(100)) {
    const m = re.exec(p.output());
    if (m) return m;
    if (p.child.exitCode !== null) throw new Error(`${p.name} exited ${p.child.exitCode}: ${p.output().slice(-2000)}`);
  }
  throw new Error(`${p.name}: no ${re} within ${timeoutMs} ms: ${p.output().slice(-2000)}`);
}

/** Peak resident memory of a live process (VmHWM), MiB. */
async function peakRssMiB(p: Proc): Promise<number> {
  return statusMiB(p, 'VmHWM');
}

async function statusMiB(p: Proc, field: 'VmHWM' | 'VmRSS'): Promise<number> {
  const status = await fs.readFile(`/proc/${p.child.pid}/status`, 'utf8');
  return Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)![1]) / 1024);
}

/**
 * Samples the resident memory (VmRSS) of processes every 250 ms until stopped: the highest
 * sample of each, MiB. VmHWM holds the peak of a process's whole life (its first run included);
 * this says what the load itself reached.
 */
function sampleRss(procs: Proc[]): () => Promise<Record<string, number>> {
  const max: Record<string, number> = Object.fromEntries(procs.map((p) => [p.name, 0]));
  let stopped = false;
  const loop = (async () => {
    for (; !stopped; await sleep(250)) {
      for (const p of procs) max[p.name] = Math.max(max[p.name]!, await statusMiB(p, 'VmRSS').catch(() => 0));
    }
  })();
  return async () => {
    stopped = true;
    await loop;
    return max;
  };
}

/** Every process's peak RSS so far (VmHWM), MiB. */
async function peaks(procs: Proc[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const p of procs) out[p.name] = await peakRssMiB(p);
  return out;
}

/** SIGINT/SIGTERM, then SIGKILL after a while. */
async function stop(p: Proc, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill(signal);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}

/** `p2ptel start` on the warehouse, once it prints its live line: its URLs, token and ingest key. */
async function startStart(name = 'start', env: NodeJS.ProcessEnv = process.env): Promise<{ proc: Proc; target: Target }> {
  const proc = launch(name, ['start', '--warehouse', dir, '--port', '0', '--collector-port', '0'], env);
  await waitForOutput(proc, /^live: a rollup runs/m);
  const out = proc.output();
  const lines = out.split('\n');
  const after = (re: RegExp) => lines[lines.findIndex((l) => re.test(l)) + 1]!.trim();
  return {
    proc,
    target: {
      api: /API listening on (\S+)/.exec(out)![1]!,
      token: after(/its token, valid/),
      collector: /collector of SDK reports listening on (\S+);/.exec(out)![1]!,
      key: after(/ingest key of \S+ \(public/),
      customer: /ingest key of (\S+) \(public/.exec(out)![1]!,
    },
  };
}

/** A report of a session (a session of its own by default); the startup time is on its seq 0 report only. */
function report(streamId: string, id: string, ts: Date, session: { sessionId: string; seq: number; final: boolean } = { sessionId: `s-${id}`, seq: 0, final: false }): Record<string, unknown> {
  return {
    reportId: id, sessionId: session.sessionId, streamId, ts: ts.toISOString(), intervalMs: INTERVAL_MS, seq: session.seq, final: session.final, cohort: 'p2p', contentType: 'live',
    bytesOffloaded: 3_000_000, bytesFallback: 1_000_000, peerCount: 3, bufferHealth: 12.5, watchMs: 30_000, ...(session.seq === 0 ? { startupMs: 900 } : {}), device: 'desktop', region: 'eu-west',
  };
}

/** As the SDK reports (docs/sdk-ingest.md): every 30 s, each session 30 times (15 minutes), its last report final. */
const INTERVAL_MS = 30_000;
const SESSION_REPORTS = 30;

/**
 * The session of the load's k-th report: `rate` reports/s every INTERVAL_MS make rate × 30 sessions
 * at once, report k going to slot k mod that; a slot's session ends after SESSION_REPORTS reports
 * and another takes its place. With --one-report-sessions, every report is a session of its own.
 */
function loadSession(started: number, rate: number, k: number): { sessionId: string; seq: number; final: boolean; slot: number } | null {
  if (opts.oneReportSessions) return null;
  const slots = Math.max(1, Math.round((rate * INTERVAL_MS) / 1000));
  const slot = k % slots;
  const round = Math.floor(k / slots);
  const seq = round % SESSION_REPORTS;
  return { sessionId: `s-${started}-${slot}-${Math.floor(round / SESSION_REPORTS)}`, seq, final: seq === SESSION_REPORTS - 1, slot };
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
async function backgroundLoad(s: Target, rate: number, stop: () => boolean): Promise<{ sent: number; refused: number }> {
  const perSecond = Math.max(1, Math.round(rate / 100));
  let sent = 0;
  let refused = 0;
  let n = 0;
  const started = Date.now();
  const inflight = new Set<Promise<void>>();
  while (!stop()) {
    const due = started + (n * 1000) / perSecond;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
    const batch = Array.from({ length: 100 }, (_, i) => {
      const session = loadSession(started, rate, n * 100 + i);
      return report(`${s.customer}:live-${(session?.slot ?? n + i) % 10}`, `bg-${started}-${n}-${i}`, new Date(), session ?? undefined);
    });
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
async function probe(s: Target, n: number): Promise<number> {
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

interface Measured {
  background: { sent: number; refused: number };
  freshness: number[];
  /** When the load started (ms since the epoch). */
  from: number;
}

/** The background load and the probes against a target, until every probe is counted. */
async function measure(target: Target): Promise<Measured> {
  if (opts.crossHour) await untilHourCrossing();
  let stopping = false;
  const from = Date.now();
  const load = backgroundLoad(target, Number(opts.rate), () => stopping);
  if (opts.crossHour) await sleep(CROSS_HOUR_WARM_UP_MS);
  const freshness: number[] = [];
  const probes: Promise<void>[] = [];
  for (let n = 0; n < Number(opts.probes); n++) {
    probes.push(probe(target, n).then((ms) => void freshness.push(ms)));
    await sleep(Number(opts.probeEvery) * 1000);
  }
  await Promise.all(probes);
  stopping = true;
  return { background: await load, freshness, from };
}

/** With --cross-hour: the load runs this long before the first probe. */
const CROSS_HOUR_WARM_UP_MS = 20_000;

/**
 * With --cross-hour: waits until the load is to start so that the probes' middle falls on the next
 * full hour (or the one after, when that moment has passed): the first run of an hour makes again
 * the session classes of the class units whose signature the hour changes, and the cut hours.
 */
async function untilHourCrossing(): Promise<void> {
  const probing = Number(opts.probes) * Number(opts.probeEvery) * 1000;
  const lead = CROSS_HOUR_WARM_UP_MS + probing / 2;
  let hour = Math.ceil(Date.now() / HOUR) * HOUR;
  if (hour - lead < Date.now()) hour += HOUR;
  const wait = hour - lead - Date.now();
  process.stderr.write(`  --cross-hour: waiting ${Math.round(wait / 1000)} s, so that the probes' middle falls on ${new Date(hour).toISOString()}\n`);
  await sleep(wait);
}

interface ModeResult {
  mode: 'start' | 'workers';
  background: { sent: number; refused: number };
  freshnessMs: { p50: number; p95: number; max: number; n: number };
  rollupsMs: { n: number; p50: number; p95: number; max: number };
  /** VmHWM at the end: the peak of each process's whole life. */
  peakRssMiB: Record<string, number>;
  /** VmHWM once the deployment served its first snapshot, before the load (`start`: its first run and pilot reports). */
  readyPeakRssMiB: Record<string, number>;
  /** The highest VmRSS sampled (every 250 ms) while the load ran. */
  loadPeakRssMiB: Record<string, number>;
}

interface RssPhases {
  peak: Record<string, number>;
  ready: Record<string, number>;
  load: Record<string, number>;
}

function summarize(mode: ModeResult['mode'], m: Measured, rollups: number[], rss: RssPhases): ModeResult {
  const f = m.freshness;
  return {
    mode,
    background: m.background,
    freshnessMs: { p50: percentile(f, 50), p95: percentile(f, 95), max: Math.max(...f), n: f.length },
    rollupsMs: { n: rollups.length, p50: percentile(rollups, 50), p95: percentile(rollups, 95), max: Math.max(...rollups) },
    peakRssMiB: rss.peak,
    readyPeakRssMiB: rss.ready,
    loadPeakRssMiB: rss.load,
  };
}

async function runStartMode(): Promise<ModeResult> {
  process.stderr.write('start: p2ptel start (a from-scratch rollup and every pilot report first) ...\n');
  const { proc, target } = await startStart();
  const ready = await peaks([proc]);
  const sampled = sampleRss([proc]);
  const m = await measure(target);
  const load = await sampled();
  const rss = { peak: await peaks([proc]), ready, load };
  await stop(proc, 'SIGINT');
  // The runs of the measure (with --cross-hour, not those of the wait before it).
  const runs = [...proc.output().matchAll(/^live: snapshot as of (\S+) counts [\d,]+ reports \([^)]*\), rolled up in ([\d.]+) s$/gm)]
    .filter((x) => Date.parse(x[1]!) >= m.from)
    .map((x) => Number(x[2]) * 1000);
  return summarize('start', m, runs, rss);
}

/** A `p2ptel` command to its end; its stdout, trimmed (throws on a non-zero exit). */
async function command(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [bin, ...args], { cwd: PROJECT_ROOT, env: ofBuild(env), maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/** The worker tier's restart as a deployment (deploy-workers), measured from the restart until CURRENT uses no stale state. */
interface WorkersDeployResult {
  /** From the restart to the first snapshot of the new workers, and to the first with no stale state. */
  firstSnapshotMs: number;
  rebuildMs: number;
  snapshots: number;
  maxStale: number;
  freshnessMs: { p50: number; p95: number; max: number; n: number };
  rollupsMs: { n: number; p50: number; p95: number; max: number };
  api: { answered: number; failed: number; longestGapMs: number };
  /** Each worker's VmHWM (its whole life: the restart on) and the highest RSS sampled. */
  peakRssMiB: Record<string, number>;
  loadPeakRssMiB: Record<string, number>;
  loadAverage: number;
}

/** The worker tier on this machine: Redis, two workers, a collector and an API, with the live settings (docs/operations.md). */
async function runWorkersMode(deploy = false): Promise<ModeResult & { deploy?: WorkersDeployResult }> {
  const redis = await startRedisServer();
  const procs: Proc[] = [];
  try {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      WAREHOUSE_DIR: dir,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: 'bench-live',
      LOG_LEVEL: 'warn',
      COLLECTOR_FLUSH_SECONDS: '2',
      WORKER_LOCK_DURATION_MS: '10000',
      WORKER_STALLED_INTERVAL_MS: '5000',
      // Two workers share the machine's cores (2 here): one DuckDB thread each.
      DUCKDB_THREADS: '1',
      PORT: '0',
      COLLECTOR_PORT: '0',
    };
    const customer = 'c1';
    await command(['tenants', 'add', '--customer', customer, '--name', `${customer} (bench)`], env).catch(() => ''); // made by an earlier run
    const token = await command(['token', '--customer', customer], env);
    const key = await command(['ingest-keys', 'add', '--customer', customer, '--label', 'bench:live workers'], env);
    const since = Date.now();
    process.stderr.write(`workers: redis ${redis.url}, two workers, schedule --rollup-every ${opts.rollupEvery}, collect, serve ...\n`);
    for (const n of [1, 2]) procs.push(launch(`worker ${n}`, ['worker'], env));
    await command(['schedule', '--rollup-every', opts.rollupEvery], env);
    const collect = launch('collect', ['collect'], env);
    const serve = launch('serve', ['serve'], env);
    procs.push(collect, serve);
    const collector = (await waitForOutput(collect, /collector listening on (\S+)/))[1]!;
    const api = (await waitForOutput(serve, /API listening on (\S+)/))[1]!;
    // The tier's own first snapshot (a run from scratch when the warehouse has none of its states).
    for (;;) {
      const current = await readCurrent(layout).catch(() => null);
      if (current && Date.parse(current.asOf) >= since) break;
      for (const p of procs) if (p.child.exitCode !== null) throw new Error(`${p.name} exited ${p.child.exitCode}: ${p.output().slice(-2000)}`);
      await sleep(500);
    }
    const ready = await peaks(procs);
    const sampled = sampleRss(procs);
    const m = await measure({ api, token, collector, key, customer });
    const load = await sampled();
    const rss = { peak: await peaks(procs), ready, load };
    const listRuns = async () => JSON.parse(await command(['runs', '--json', '--limit', '2000'], env)) as { kind: string; state: string; startedAt: number | null; durationMs: number | null }[];
    const runs = await listRuns();
    const rollups = runs.filter((r) => r.kind === 'rollup' && r.state === 'completed' && (r.startedAt ?? 0) >= m.from).map((r) => r.durationMs!);
    const steady = summarize('workers', m, rollups, rss);
    if (!deploy) return steady;
    // The deployment: the workers stopped, then started with other state SQL; the collector and the API go on.
    process.stderr.write('deploy-workers: the workers restarted with other state SQL ...\n');
    const workers = procs.filter((p) => p.name.startsWith('worker'));
    await Promise.all(workers.map((p) => stop(p)));
    const launched = Date.now();
    const salted = { ...env, P2PTEL_TEST_STATE_CODE_SALT: `bench-${launched}` };
    const restarted = [1, 2].map((n) => launch(`worker ${n} deployed`, ['worker'], salted));
    procs.push(...restarted);
    const sampledAfter = sampleRss(restarted);
    const target: Target = { api, token, collector, key, customer };
    let over = false;
    let firstSnapshotMs = NaN;
    let maxStale = 0;
    const seen = new Set<string>();
    const watch = (async () => {
      while (!over) {
        const c = await currentStale();
        if (c && c.asOf >= launched && !seen.has(c.snapshot)) {
          seen.add(c.snapshot);
          if (Number.isNaN(firstSnapshotMs)) firstSnapshotMs = Date.now() - launched;
          maxStale = Math.max(maxStale, c.stale);
          if (c.stale === 0) return Date.now() - launched;
        }
        for (const p of restarted) if (p.child.exitCode !== null) throw new Error(`${p.name} exited ${p.child.exitCode}: ${p.output().slice(-2000)}`);
        await sleep(250);
      }
      return NaN;
    })();
    const answers = { answered: 0, failed: 0, longestGapMs: 0 };
    const asking = (async () => {
      let last = Date.now();
      while (!over) {
        const ok = await fetch(`${api}/telemetry/streams?window=1h`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.ok, () => false);
        const now = Date.now();
        if (ok) {
          answers.answered++;
          answers.longestGapMs = Math.max(answers.longestGapMs, now - last);
          last = now;
        } else answers.failed++;
        await sleep(250);
      }
    })();
    let stopping = false;
    const loading = backgroundLoad(target, Number(opts.rate), () => stopping);
    const freshness: number[] = [];
    const probes: Promise<void>[] = [];
    let rebuildMs = NaN;
    void watch.then((ms) => (rebuildMs = ms));
    for (let n = 0; Number.isNaN(rebuildMs) || n < Number(opts.probes); n++) {
      probes.push(probe(target, 2000 + n).then((ms) => void freshness.push(ms)));
      await sleep(Number(opts.probeEvery) * 1000);
    }
    await Promise.all(probes);
    await watch;
    over = true;
    stopping = true;
    await Promise.all([loading, asking]);
    const loadPeak = await sampledAfter();
    const after = (await listRuns()).filter((r) => r.kind === 'rollup' && r.state === 'completed' && (r.startedAt ?? 0) >= launched && (r.startedAt ?? 0) <= launched + rebuildMs).map((r) => r.durationMs!);
    const f = freshness;
    return {
      ...steady,
      deploy: {
        firstSnapshotMs,
        rebuildMs,
        snapshots: seen.size,
        maxStale,
        freshnessMs: { p50: percentile(f, 50), p95: percentile(f, 95), max: Math.max(...f), n: f.length },
        rollupsMs: { n: after.length, p50: percentile(after, 50), p95: percentile(after, 95), max: Math.max(...after) },
        api: answers,
        peakRssMiB: await peaks(restarted),
        loadPeakRssMiB: loadPeak,
        loadAverage: os.loadavg()[0]!,
      },
    };
  } finally {
    await Promise.all(procs.map((p) => stop(p)));
    await redis.stop();
  }
}

function describe(r: ModeResult): string[] {
  const f = r.freshnessMs;
  const s = (ms: number, digits = 1) => `${(ms / 1000).toFixed(digits)} s`;
  const title = r.mode === 'start' ? 'start (embedded default)' : `workers (Redis, 2 workers, --rollup-every ${opts.rollupEvery}, collect, serve)`;
  return [
    `${title}: ${r.background.sent} reports sent, ${r.background.refused} requests refused`,
    `  freshness (acknowledgement → first API answer counting it), ${f.n} probes: p50 ${s(f.p50)}, p95 ${s(f.p95)}, max ${s(f.max)} (goal p95 ≤ 10 s: ${f.p95 <= 10_000 ? 'met' : 'NOT met'})`,
    `  rollups: ${r.rollupsMs.n}, p50 ${s(r.rollupsMs.p50, 2)}, p95 ${s(r.rollupsMs.p95, 2)}, max ${s(r.rollupsMs.max, 2)}`,
    `  peak RSS: ${Object.entries(r.peakRssMiB).map(([name, mib]) => `${name} ${mib} MiB (before the load ${r.readyPeakRssMiB[name]}, under it ${r.loadPeakRssMiB[name]})`).join(', ')}`,
  ];
}

/** One restart of `start` as a deployment, measured from the restart until no state is stale. */
interface RestartResult {
  name: string;
  /** From the launch to the ports answering, to the live loop, and to the first snapshot with no stale state (the rebuild's end). */
  portsOpenMs: number;
  liveMs: number;
  rebuildMs: number;
  /** Snapshots published from the launch to the rebuild's end, and the most stale states one of them used. */
  snapshots: number;
  maxStale: number;
  /** Probes posted from the ports' opening to the rebuild's end (at least `--probes`): ms from the 202 to the API listing it. */
  freshnessMs: { p50: number; p95: number; max: number; n: number };
  /** The probes posted from the live loop's start to the rebuild's end (the restart's catch-up not in them). */
  liveFreshnessMs: { p50: number; p95: number; max: number; n: number };
  /** The runs of the live loop (its `live: snapshot … rolled up in` lines) from its start to the rebuild's end. */
  liveRunsMs: { n: number; p50: number; p95: number; max: number };
  /** GET /telemetry/streams every 250 ms from the ports' opening to the rebuild's end: answered, failed, and the longest wait between two answers. */
  api: { answered: number; failed: number; longestGapMs: number };
  peakRssMiB: number;
  /** The highest RSS sampled from the live loop's start to the rebuild's end. */
  livePeakRssMiB: number;
  /** The load average (1 min) at the rebuild's end. */
  loadAverage: number;
}

/** The current snapshot's asOf and stale states (null: none readable). */
async function currentStale(): Promise<{ asOf: number; stale: number; snapshot: string } | null> {
  const current = await readCurrent(layout).catch(() => null);
  if (!current) return null;
  const manifest = await readSnapshotManifest(snapshotFiles(publishedDir(layout, current.snapshot)).manifest);
  return { asOf: Date.parse(current.asOf), stale: manifest.partitionStates?.stale ?? 0, snapshot: current.snapshot };
}

/** Stop `prev`, launch `start` with `env`, and measure until the first snapshot of the new process with no stale state. */
async function restart(name: string, prev: Proc, token: string, env: NodeJS.ProcessEnv): Promise<{ proc: Proc; target: Target; result: RestartResult }> {
  await stop(prev, 'SIGINT');
  const launched = Date.now();
  const proc = launch(name, ['start', '--warehouse', dir, '--port', '0', '--collector-port', '0'], env);
  const open = await waitForOutput(proc, /^API on (\S+) and collector on (\S+) answer now/m);
  const portsOpenMs = Date.now() - launched;
  const partial: Target = { api: open[1]!, collector: open[2]!, token, key: '', customer: '' };
  // The sample key and customer are the previous process's (kept across starts): read from its output.
  const before = prev.output();
  partial.key = before.split('\n')[before.split('\n').findIndex((l) => /ingest key of \S+ \(public/.test(l)) + 1]!.trim();
  partial.customer = /ingest key of (\S+) \(public/.exec(before)![1]!;
  let over = false;
  let liveMs = NaN;
  let liveRss: (() => Promise<Record<string, number>>) | null = null;
  void waitForOutput(proc, /^live: a rollup runs/m).then(
    () => {
      liveMs = Date.now() - launched;
      liveRss = sampleRss([proc]);
    },
    () => {},
  );
  const seen = new Set<string>();
  let maxStale = 0;
  const watch = (async () => {
    while (!over) {
      const c = await currentStale();
      if (c && c.asOf >= launched && !seen.has(c.snapshot)) {
        seen.add(c.snapshot);
        maxStale = Math.max(maxStale, c.stale);
        if (c.stale === 0) return Date.now() - launched;
      }
      if (proc.child.exitCode !== null) throw new Error(`${name} exited ${proc.child.exitCode}: ${proc.output().slice(-2000)}`);
      await sleep(250);
    }
    return NaN;
  })();
  const api = { answered: 0, failed: 0, longestGapMs: 0 };
  const asking = (async () => {
    let last = Date.now();
    while (!over) {
      const ok = await fetch(`${partial.api}/telemetry/streams?window=1h`, { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.ok, () => false);
      const now = Date.now();
      if (ok) {
        api.answered++;
        api.longestGapMs = Math.max(api.longestGapMs, now - last);
        last = now;
      } else api.failed++;
      await sleep(250);
    }
  })();
  let stopping = false;
  const load = backgroundLoad(partial, Number(opts.rate), () => stopping);
  const freshness: number[] = [];
  const liveFreshness: number[] = [];
  const probes: Promise<void>[] = [];
  let rebuildMs = NaN;
  void watch.then((ms) => (rebuildMs = ms));
  for (let n = 0; Number.isNaN(rebuildMs) || n < Number(opts.probes); n++) {
    // Posted once the live loop runs and before the rebuild's end: freshness during the rebuild proper.
    const duringLive = !Number.isNaN(liveMs) && Number.isNaN(rebuildMs);
    probes.push(probe(partial, 1000 + n).then((ms) => void (freshness.push(ms), duringLive && liveFreshness.push(ms))));
    await sleep(Number(opts.probeEvery) * 1000);
  }
  await Promise.all(probes);
  await watch;
  over = true;
  stopping = true;
  await Promise.all([load, asking]);
  const liveFrom = launched + liveMs;
  const liveTo = launched + rebuildMs;
  const runs = [...proc.output().matchAll(/^live: snapshot as of (\S+) counts [\d,]+ reports \([^)]*\), rolled up in ([\d.]+) s$/gm)]
    .filter((x) => Date.parse(x[1]!) >= liveFrom && Date.parse(x[1]!) <= liveTo)
    .map((x) => Number(x[2]) * 1000);
  const sampled = liveRss ? (await (liveRss as () => Promise<Record<string, number>>)())[name]! : NaN;
  const f = freshness;
  const lf = liveFreshness;
  const result: RestartResult = {
    name,
    portsOpenMs,
    liveMs,
    rebuildMs,
    snapshots: seen.size,
    maxStale,
    freshnessMs: { p50: percentile(f, 50), p95: percentile(f, 95), max: Math.max(...f), n: f.length },
    liveFreshnessMs: { p50: percentile(lf, 50), p95: percentile(lf, 95), max: Math.max(...lf), n: lf.length },
    liveRunsMs: { n: runs.length, p50: percentile(runs, 50), p95: percentile(runs, 95), max: Math.max(...runs) },
    api,
    peakRssMiB: await peakRssMiB(proc),
    livePeakRssMiB: sampled,
    loadAverage: os.loadavg()[0]!,
  };
  return { proc, target: partial, result };
}

/** `start` steady, then three restarts: a deployment that changes the state SQL, the same with the blocking rebuild, and a plain restart. */
async function runDeployMode(): Promise<{ steady: ModeResult & { loadAverage: number }; restarts: RestartResult[] }> {
  process.stderr.write('deploy: p2ptel start, steady ...\n');
  const first = await startStart();
  const ready = { start: await peakRssMiB(first.proc) };
  const sampled = sampleRss([first.proc]);
  const m = await measure(first.target);
  const load = await sampled();
  const peak = { start: await peakRssMiB(first.proc) };
  const steadyRuns = [...first.proc.output().matchAll(/^live: snapshot as of (\S+) counts [\d,]+ reports \([^)]*\), rolled up in ([\d.]+) s$/gm)]
    .filter((x) => Date.parse(x[1]!) >= m.from)
    .map((x) => Number(x[2]) * 1000);
  const steady = { ...summarize('start', m, steadyRuns, { peak, ready, load }), loadAverage: os.loadavg()[0]! };
  const salt = `bench-${Date.now()}`;
  const restarts: RestartResult[] = [];
  let prev = first.proc;
  let code = `${salt}-0`;
  for (const kind of opts.deploys.split(',')) {
    if (kind === 'background') {
      process.stderr.write('deploy: restart with other state SQL (the rebuild in the background) ...\n');
      code = `${salt}-${restarts.length}`;
      const r = await restart('deploy background', prev, first.target.token, { ...process.env, P2PTEL_TEST_STATE_CODE_SALT: code });
      restarts.push(r.result);
      prev = r.proc;
    } else if (kind === 'blocking') {
      process.stderr.write('deploy: restart with other state SQL, ROLLUP_REBUILD_BUDGET=0 (blocking) ...\n');
      code = `${salt}-${restarts.length}`;
      const r = await restart('deploy blocking', prev, first.target.token, { ...process.env, P2PTEL_TEST_STATE_CODE_SALT: code, ROLLUP_REBUILD_BUDGET: '0' });
      restarts.push(r.result);
      prev = r.proc;
    } else if (kind === 'plain') {
      process.stderr.write('deploy: plain restart ...\n');
      const r = await restart('plain restart', prev, first.target.token, { ...process.env, ...(restarts.length > 0 ? { P2PTEL_TEST_STATE_CODE_SALT: code } : {}) });
      restarts.push(r.result);
      prev = r.proc;
    } else throw new Error(`--deploys: background, blocking or plain, not ${kind}`);
  }
  await stop(prev, 'SIGINT');
  return { steady, restarts };
}

function describeRestart(r: RestartResult): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const f = r.freshnessMs;
  return (
    `  ${r.name}: ports ${s(r.portsOpenMs)}, live loop ${s(r.liveMs)}, no stale state ${s(r.rebuildMs)} (${r.snapshots} snapshots, up to ${r.maxStale} stale); ` +
    `freshness ${f.n} probes p50 ${s(f.p50)}, p95 ${s(f.p95)}, max ${s(f.max)}; API ${r.api.answered} answers, ${r.api.failed} failed, longest gap ${s(r.api.longestGapMs)}; peak RSS ${r.peakRssMiB} MiB\n` +
    `    from the live loop to no stale state (${s(r.rebuildMs - r.liveMs)}): freshness ${r.liveFreshnessMs.n} probes p50 ${s(r.liveFreshnessMs.p50)}, p95 ${s(r.liveFreshnessMs.p95)}, max ${s(r.liveFreshnessMs.max)}; ` +
    `runs ${r.liveRunsMs.n}, p50 ${(r.liveRunsMs.p50 / 1000).toFixed(2)} s, p95 ${(r.liveRunsMs.p95 / 1000).toFixed(2)} s, max ${(r.liveRunsMs.max / 1000).toFixed(2)} s; RSS sampled up to ${r.livePeakRssMiB} MiB; load average ${r.loadAverage.toFixed(1)}`
  );
}

await ensureHistory();
if (opts.mode === 'deploy-workers') {
  const w = await runWorkersMode(true);
  const d = w.deploy!;
  const sec = (ms: number, digits = 1) => `${(ms / 1000).toFixed(digits)} s`;
  process.stdout.write(
    [
      `live benchmark, a deployment of the worker tier: ${opts.days} days × ${Number(opts.customers) * Number(opts.streams)} streams of history, ${opts.rate} reports/s in the background${cli.tiny ? ' (--tiny: a check that it runs, not a measure)' : ''}`,
      ...describe(w),
      `  workers restarted with other state SQL: first snapshot ${sec(d.firstSnapshotMs)}, no stale state ${sec(d.rebuildMs)} (${d.snapshots} snapshots, up to ${d.maxStale} stale); ` +
        `freshness ${d.freshnessMs.n} probes p50 ${sec(d.freshnessMs.p50)}, p95 ${sec(d.freshnessMs.p95)}, max ${sec(d.freshnessMs.max)}; ` +
        `rollups ${d.rollupsMs.n}, p50 ${sec(d.rollupsMs.p50, 2)}, p95 ${sec(d.rollupsMs.p95, 2)}, max ${sec(d.rollupsMs.max, 2)}; API ${d.api.answered} answers, ${d.api.failed} failed, longest gap ${sec(d.api.longestGapMs)}`,
      `  peak RSS of the restarted workers: ${Object.entries(d.peakRssMiB).map(([name, mib]) => `${name} ${mib} MiB (sampled up to ${d.loadPeakRssMiB[name]})`).join(', ')}; load average ${d.loadAverage.toFixed(1)}`,
    ].join('\n') + '\n',
  );
  const file = await writeResult(cli.tiny ? 'live-deploy-workers-tiny' : 'live-deploy-workers', w);
  process.stdout.write(`  (${path.relative(PROJECT_ROOT, file)})\n`);
  process.exit(0);
}
if (opts.mode === 'deploy') {
  const d = await runDeployMode();
  process.stdout.write(
    [
      `live benchmark, deployments: ${opts.days} days × ${Number(opts.customers) * Number(opts.streams)} streams of history, ${opts.rate} reports/s in the background${cli.tiny ? ' (--tiny: a check that it runs, not a measure)' : ''}`,
      ...describe(d.steady),
      `  load average at the steady phase's end: ${d.steady.loadAverage.toFixed(1)}`,
      ...d.restarts.map(describeRestart),
    ].join('\n') + '\n',
  );
  const file = await writeResult(cli.tiny ? 'live-deploy-tiny' : 'live-deploy', d);
  process.stdout.write(`  (${path.relative(PROJECT_ROOT, file)})\n`);
  process.exit(0);
}
const modes: ModeResult[] = [];
if (opts.mode !== 'workers') modes.push(await runStartMode());
if (opts.mode !== 'start') modes.push(await runWorkersMode());
const result = { history: { days: Number(opts.days), streams: Number(opts.customers) * Number(opts.streams) }, rate: Number(opts.rate), tiny: cli.tiny === true, modes };
process.stdout.write(
  [
    `live benchmark: ${result.history.days} days × ${result.history.streams} streams of history, ${result.rate} reports/s in the background${result.tiny ? ' (--tiny: a check that it runs, not a measure)' : ''}`,
    ...modes.flatMap(describe),
  ].join('\n') + '\n',
);
const file = await writeResult(cli.tiny ? 'live-tiny' : 'live', result);
process.stdout.write(`  (${path.relative(PROJECT_ROOT, file)})\n`);
process.exit(0);
