// The machinery of the live benchmarks (bench:live, bench:alerts --live): a generated history,
// the deployments as processes (`start`; the worker tier: a redis-server of its own, workers,
// `schedule`, `collect`, `serve`), the SDK-like background load on the collector, and the
// freshness probes (a report of a new stream until the API lists it).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { PROJECT_ROOT } from '../lib/version.ts';
import { warehouseLayout, type WarehouseLayout } from '../warehouse/layout.ts';
import { discoverLanding } from '../warehouse/landing/index.ts';
import { readCurrent } from '../warehouse/snapshots/index.ts';
import { startRedisServer, type RedisServer } from '../test/helpers/redis-server.ts';

export const HOUR = 3_600_000;
export const bin = path.join(PROJECT_ROOT, 'bin/p2ptel.js');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};

/** The p50, p95, max and count of a list of durations. */
export interface Stats {
  p50: number;
  p95: number;
  max: number;
  n: number;
}

export const stats = (xs: number[]): Stats => ({ p50: percentile(xs, 50), p95: percentile(xs, 95), max: Math.max(...xs), n: xs.length });

/** Where the probes and the load go: the API (and a token it takes), the collector (and an ingest key). */
export interface Target {
  api: string;
  token: string;
  collector: string;
  key: string;
  customer: string;
}

/** A process of the benchmark, its output kept. */
export interface Proc {
  name: string;
  child: ChildProcess;
  output: () => string;
  /**
   * Every line of its output that starts with `live: snapshot as of` (`start`'s runs), from the
   * start: the output tail (200 KB) holds only the last few runs when P2PTEL_SQL_TRACE is on.
   */
  runLines: () => readonly string[];
}

/** The size of a generated history. */
export interface HistorySize {
  days: string;
  customers: string;
  streams: string;
  sessions: string;
}

/** The worker tier on this machine, running. */
export interface WorkerTier {
  redis: RedisServer;
  procs: Proc[];
  target: Target;
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** Resolves with `re`'s first match in the process's output. */
export async function waitForOutput(p: Proc, re: RegExp, timeoutMs = 600_000): Promise<RegExpExecArray> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(100)) {
    const m = re.exec(p.output());
    if (m) return m;
    if (p.child.exitCode !== null) throw new Error(`${p.name} exited ${p.child.exitCode}: ${p.output().slice(-2000)}`);
  }
  throw new Error(`${p.name}: no ${re} within ${timeoutMs} ms: ${p.output().slice(-2000)}`);
}

/** Peak resident memory of a live process (VmHWM), MiB. */
export async function peakRssMiB(p: Proc): Promise<number> {
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
export function sampleRss(procs: Proc[]): () => Promise<Record<string, number>> {
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
export async function peaks(procs: Proc[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const p of procs) out[p.name] = await peakRssMiB(p);
  return out;
}

/** SIGINT/SIGTERM, then SIGKILL after a while. */
export async function stop(p: Proc, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise((r) => p.child.once('exit', r));
  p.child.kill(signal);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}

/** With P2PTEL_BUILD (another build of `p2ptel`, e.g. the code before a change): that build, not the sources that bin/run-ts.js's P2PTEL_FROM_SOURCE would run. */
export function ofBuild(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!env['P2PTEL_BUILD']) return env;
  const { P2PTEL_FROM_SOURCE: _fromSource, ...rest } = env;
  return rest;
}

/** A `p2ptel` command to its end; its stdout, trimmed (throws on a non-zero exit). */
export async function command(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [bin, ...args], { cwd: PROJECT_ROOT, env: ofBuild(env), maxBuffer: 64 * 1024 * 1024 });
  return stdout.trim();
}

/** As the SDK reports (docs/sdk-ingest.md): every 30 s, each session 30 times (15 minutes), its last report final. */
const INTERVAL_MS = 30_000;
const SESSION_REPORTS = 30;

/** A report of a session (a session of its own by default); the startup time is on its seq 0 report only. */
export function report(streamId: string, id: string, ts: Date, session: { sessionId: string; seq: number; final: boolean } = { sessionId: `s-${id}`, seq: 0, final: false }): Record<string, unknown> {
  return {
    reportId: id, sessionId: session.sessionId, streamId, ts: ts.toISOString(), intervalMs: INTERVAL_MS, seq: session.seq, final: session.final, cohort: 'p2p', contentType: 'live',
    bytesOffloaded: 3_000_000, bytesFallback: 1_000_000, peerCount: 3, bufferHealth: 12.5, watchMs: 30_000, ...(session.seq === 0 ? { startupMs: 900 } : {}), device: 'desktop', region: 'eu-west',
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
/** Reports posted to the collector as an SDK posts them (gzipped, with the ingest key): the status. */
export function post(url: string, key: string, reports: Record<string, unknown>[]): Promise<number> {
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

/** One report of `streamId` posted; resolves at its 202 (performance.now()). */
export async function postProbe(s: Target, streamId: string, n: number): Promise<number> {
  const status = await post(s.collector, s.key, [report(streamId, `probe-${streamId}`, new Date())]);
  const acked = performance.now();
  if (status !== 202) throw new Error(`probe ${n} answered ${status}`);
  return acked;
}

/** Polls the API every 200 ms until it lists `streamId`: ms from `acked` (performance.now()). */
export async function untilListed(s: Target, streamId: string, acked: number, n: number): Promise<number> {
  for (;;) {
    const res = await fetch(`${s.api}/telemetry/streams?window=1h`, { headers: { Authorization: `Bearer ${s.token}` } });
    const body = (await res.json()) as { streams: string[] };
    if (body.streams.includes(streamId)) return performance.now() - acked;
    if (performance.now() - acked > 180_000) throw new Error(`probe ${n} not counted after 180 s`);
    await sleep(200);
  }
}

/** One freshness probe: a report of a new stream, then polls until the API lists it; ms from the 202. */
export async function probe(s: Target, n: number): Promise<number> {
  const streamId = `${s.customer}:probe-${Date.now()}-${n}`;
  return untilListed(s, streamId, await postProbe(s, streamId, n), n);
}

/** The live benchmarks' processes on one warehouse folder. */
export class LiveBench {
  readonly layout: WarehouseLayout;

  constructor(readonly opts: { dir: string; logs?: string; oneReportSessions?: boolean }) {
    this.layout = warehouseLayout(opts.dir);
  }

  /** Generates the history (`cli generate`, ending an hour before now) when the folder has none. */
  async ensureHistory(size: HistorySize): Promise<void> {
    if ((await discoverLanding(this.layout)).files.length > 0) return;
    const days = Number(size.days);
    const customers = Array.from({ length: Number(size.customers) }, (_, i) => `c${i + 1}`);
    const end = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
    process.stderr.write(`generating ${days} days × ${customers.length * Number(size.streams)} streams into ${this.opts.dir} ...\n`);
    await promisify(execFile)(
      process.execPath,
      [bin, 'generate', '--warehouse', this.opts.dir, '--customers', customers.join(','), '--streams', size.streams,
        '--sessions', size.sessions, '--start', new Date(end - days * 24 * HOUR).toISOString(), '--hours', String(days * 24), '--seed', '11'],
      { maxBuffer: 64 * 1024 * 1024 },
    );
  }

  launch(name: string, args: string[], env: NodeJS.ProcessEnv = process.env): Proc {
    const child = spawn(process.execPath, [bin, ...args], { cwd: PROJECT_ROOT, env: ofBuild(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const runLines: string[] = [];
    // Only the tail: a worker's logs over minutes would be large. The runs' lines apart, whole
    // (each stream's lines come in chunks that may cut a line).
    const log = this.opts.logs ? createWriteStream(path.join(this.opts.logs, `${name.replace(/\s+/g, '-')}.log`)) : null;
    const keep = (d: Buffer) => {
      out = (out + d.toString()).slice(-200_000);
      log?.write(d);
    };
    const runsOf = () => {
      let partial = '';
      return (d: Buffer) => {
        const lines = (partial + d.toString()).split('\n');
        partial = lines.pop()!;
        for (const l of lines) if (l.startsWith('live: snapshot as of ')) runLines.push(l);
      };
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.stdout!.on('data', runsOf());
    child.stderr!.on('data', runsOf());
    process.once('exit', () => child.kill('SIGKILL'));
    return { name, child, output: () => out, runLines: () => runLines };
  }

  /** `p2ptel start` on the warehouse, once it prints its live line: its URLs, token and ingest key. */
  async startStart(name = 'start', env: NodeJS.ProcessEnv = process.env): Promise<{ proc: Proc; target: Target }> {
    const proc = this.launch(name, ['start', '--warehouse', this.opts.dir, '--port', '0', '--collector-port', '0'], env);
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

  /**
   * The worker tier on this machine: a redis-server of its own (a free port), two workers,
   * `schedule --rollup-every`, a collector and an API, with the live settings
   * (docs/operations.md) and `extraEnv`; resolves once the tier published its own first snapshot.
   */
  async startWorkerTier(rollupEvery: string, label: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<WorkerTier> {
    const redis = await startRedisServer();
    const procs: Proc[] = [];
    const close = async () => {
      await Promise.all(procs.map((p) => stop(p)));
      await redis.stop();
    };
    try {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        WAREHOUSE_DIR: this.opts.dir,
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
        ...extraEnv,
      };
      const customer = 'c1';
      await command(['tenants', 'add', '--customer', customer, '--name', `${customer} (bench)`], env).catch(() => ''); // made by an earlier run
      const token = await command(['token', '--customer', customer], env);
      const key = await command(['ingest-keys', 'add', '--customer', customer, '--label', label], env);
      const since = Date.now();
      process.stderr.write(`workers: redis ${redis.url}, two workers, schedule --rollup-every ${rollupEvery}, collect, serve ...\n`);
      for (const n of [1, 2]) procs.push(this.launch(`worker ${n}`, ['worker'], env));
      await command(['schedule', '--rollup-every', rollupEvery], env);
      const collect = this.launch('collect', ['collect'], env);
      const serve = this.launch('serve', ['serve'], env);
      procs.push(collect, serve);
      const collector = (await waitForOutput(collect, /collector listening on (\S+)/))[1]!;
      const api = (await waitForOutput(serve, /API listening on (\S+)/))[1]!;
      // The tier's own first snapshot (a run from scratch when the warehouse has none of its states).
      for (;;) {
        const current = await readCurrent(this.layout).catch(() => null);
        if (current && Date.parse(current.asOf) >= since) break;
        for (const p of procs) if (p.child.exitCode !== null) throw new Error(`${p.name} exited ${p.child.exitCode}: ${p.output().slice(-2000)}`);
        await sleep(500);
      }
      return { redis, procs, target: { api, token, collector, key, customer }, env, close };
    } catch (err) {
      await close();
      throw err;
    }
  }

  /**
   * The session of the load's k-th report: `rate` reports/s every INTERVAL_MS make rate × 30 sessions
   * at once, report k going to slot k mod that; a slot's session ends after SESSION_REPORTS reports
   * and another takes its place. With oneReportSessions, every report is a session of its own.
   */
  private loadSession(started: number, rate: number, k: number): { sessionId: string; seq: number; final: boolean; slot: number } | null {
    if (this.opts.oneReportSessions) return null;
    const slots = Math.max(1, Math.round((rate * INTERVAL_MS) / 1000));
    const slot = k % slots;
    const round = Math.floor(k / slots);
    const seq = round % SESSION_REPORTS;
    return { sessionId: `s-${started}-${slot}-${Math.floor(round / SESSION_REPORTS)}`, seq, final: seq === SESSION_REPORTS - 1, slot };
  }

  /** `rate` reports/s in batches of 100, evenly spaced, until `stop` says so. */
  async backgroundLoad(s: Target, rate: number, stop: () => boolean): Promise<{ sent: number; refused: number }> {
    const perSecond = Math.max(1, Math.round(rate / 100));
    let sent = 0;
    let refused = 0;
    let n = 0;
    const started = Date.now();
    const inflight = new Set<Promise<void>>();
    while (!stop()) {
      const due = started + (n * 1000) / perSecond;
      await sleep(Math.max(0, due - Date.now()));
      const batch = Array.from({ length: 100 }, (_, i) => {
        const session = this.loadSession(started, rate, n * 100 + i);
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
}
