// npm run bench:live -- [--mode both|start|workers|deploy|deploy-workers] [--deploys background,blocking,plain] [--after] [--tiny] [--one-report-sessions] [--cross-hour] [--logs DIR] [--dir DIR] [--days 30] [--customers 10] [--streams 10] [--sessions 1350] [--rate 5000] [--probes 30] [--probe-every 3] [--rollup-every 2s]
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
//            the same time and the highest RSS sampled then. `--after`: then the same process,
//            rebuilt, measured again under the same load for as many probes: the baseline that is
//            as late in the load as the rebuild (today's partition grows with every minute of it,
//            so the steady phase at the start is an earlier, lighter one).
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
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { PROJECT_ROOT } from '../lib/version.ts';
import { publishedDir, readCurrent, snapshotFiles } from '../warehouse/snapshots/index.ts';
import { readSnapshotManifest } from '../warehouse/snapshots/index.ts';
import { HOUR, LiveBench, command, peakRssMiB, peaks, stats, probe, sampleRss, sleep, stop, waitForOutput, type Proc, type Stats, type Target } from './live-harness.ts';
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
  .option('--after', "deploy mode: after each rebuild, the same process measured again with the same load for as many probes as the rebuild had (at least --probes): a baseline as late in the load as the rebuild, since today's partition grows with every minute of it")
  .option('--one-report-sessions', 'the background load posts every report as a session of its own (rate new sessions a second) instead of sessions reporting every 30 s')
  .parse()
  .opts<{ mode: string; tiny?: boolean; dir?: string; days: string; customers: string; streams: string; sessions: string; rate: string; probes: string; probeEvery: string; rollupEvery: string; oneReportSessions?: boolean; crossHour?: boolean; logs?: string; deploys: string; after?: boolean }>();
const TINY = { days: '1', customers: '2', streams: '2', sessions: '40', rate: '200', probes: '4', probeEvery: '2' };
const opts = cli.tiny ? { ...cli, ...TINY } : cli;
if (!['start', 'workers', 'both', 'deploy', 'deploy-workers'].includes(opts.mode)) throw new Error(`--mode: start, workers, both, deploy or deploy-workers, not ${opts.mode}`);

const dir = path.resolve(opts.dir ?? path.join(PROJECT_ROOT, 'bench', 'output', cli.tiny ? 'live-tiny' : 'live'));
if (opts.logs) mkdirSync(opts.logs, { recursive: true });
const bench = new LiveBench({ dir, logs: opts.logs, oneReportSessions: opts.oneReportSessions });
const layout = bench.layout;

interface Measured {
  background: { sent: number; refused: number };
  freshness: number[];
  /** When the load started (ms since the epoch). */
  from: number;
}

/** The background load and the probes (`--probes`, or `count` numbered from `first`) against a target, until every probe is counted. */
async function measure(target: Target, count = Number(opts.probes), first = 0): Promise<Measured> {
  if (opts.crossHour) await untilHourCrossing();
  let stopping = false;
  const from = Date.now();
  const load = bench.backgroundLoad(target, Number(opts.rate), () => stopping);
  if (opts.crossHour) await sleep(CROSS_HOUR_WARM_UP_MS);
  const freshness: number[] = [];
  const probes: Promise<void>[] = [];
  for (let n = 0; n < count; n++) {
    probes.push(probe(target, first + n).then((ms) => void freshness.push(ms)));
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


/** The durations (ms) of `start`'s live-loop runs (its `live: snapshot … rolled up in` lines) whose snapshot is as of `from` to `to`. */
function liveRuns(proc: Proc, from: number, to = Infinity): number[] {
  return [...proc.runLines().join('\n').matchAll(/^live: snapshot as of (\S+) counts [\d,]+ reports \([^)]*\), rolled up in ([\d.]+) s$/gm)]
    .filter((x) => Date.parse(x[1]!) >= from && Date.parse(x[1]!) <= to)
    .map((x) => Number(x[2]) * 1000);
}

type RunRow = { kind: string; state: string; startedAt: number | null; durationMs: number | null };

/** The worker tier's completed rollups (`p2ptel runs`) started from `from` to `to`: their durations, ms. */
async function tierRollups(env: NodeJS.ProcessEnv, from: number, to = Infinity): Promise<number[]> {
  const runs = JSON.parse(await command(['runs', '--json', '--limit', '2000'], env)) as RunRow[];
  return runs.filter((r) => r.kind === 'rollup' && r.state === 'completed' && (r.startedAt ?? 0) >= from && (r.startedAt ?? 0) <= to).map((r) => r.durationMs!);
}

function summarize(mode: ModeResult['mode'], m: Measured, rollups: number[], rss: RssPhases): ModeResult {
  return {
    mode,
    background: m.background,
    freshnessMs: stats(m.freshness),
    rollupsMs: stats(rollups),
    peakRssMiB: rss.peak,
    readyPeakRssMiB: rss.ready,
    loadPeakRssMiB: rss.load,
  };
}

async function runStartMode(): Promise<ModeResult> {
  process.stderr.write('start: p2ptel start (a from-scratch rollup and every pilot report first) ...\n');
  const { proc, target } = await bench.startStart();
  const ready = await peaks([proc]);
  const sampled = sampleRss([proc]);
  const m = await measure(target);
  const load = await sampled();
  const rss = { peak: await peaks([proc]), ready, load };
  await stop(proc, 'SIGINT');
  // The runs of the measure (with --cross-hour, not those of the wait before it).
  return summarize('start', m, liveRuns(proc, m.from), rss);
}

/** The worker tier's restart as a deployment (deploy-workers), measured from the restart until CURRENT uses no stale state. */
interface WorkersDeployResult {
  /** From the restart to the first snapshot of the new workers, and to the first with no stale state. */
  firstSnapshotMs: number;
  rebuildMs: number;
  snapshots: number;
  maxStale: number;
  freshnessMs: Stats;
  rollupsMs: Stats;
  api: ApiAnswers;
  /** Each worker's VmHWM (its whole life: the restart on) and the highest RSS sampled. */
  peakRssMiB: Record<string, number>;
  loadPeakRssMiB: Record<string, number>;
  loadAverage: number;
}

/** The worker tier on this machine: Redis, two workers, a collector and an API, with the live settings (docs/operations.md); with `deploy`, then its workers restarted with other state SQL. */
async function runWorkersMode(deploy = false): Promise<ModeResult & { deploy?: WorkersDeployResult }> {
  const tier = await bench.startWorkerTier(opts.rollupEvery, 'bench:live workers');
  try {
    const { procs, env } = tier;
    const ready = await peaks(procs);
    const sampled = sampleRss(procs);
    const m = await measure(tier.target);
    const load = await sampled();
    const rss = { peak: await peaks(procs), ready, load };
    const steady = summarize('workers', m, await tierRollups(env, m.from), rss);
    if (!deploy) return steady;
    // The deployment: the workers stopped, then started with other state SQL; the collector and the API go on.
    process.stderr.write('deploy-workers: the workers restarted with other state SQL ...\n');
    await Promise.all(procs.filter((p) => p.name.startsWith('worker')).map((p) => stop(p)));
    const launched = Date.now();
    const salted = { ...env, P2PTEL_TEST_STATE_CODE_SALT: `bench-${launched}` };
    const restarted = [1, 2].map((n) => bench.launch(`worker ${n} deployed`, ['worker'], salted));
    procs.push(...restarted);
    const sampledAfter = sampleRss(restarted);
    const d = await untilNoStale(tier.target, launched, restarted, 2000);
    const loadPeak = await sampledAfter();
    return {
      ...steady,
      deploy: {
        firstSnapshotMs: d.firstSnapshotMs,
        rebuildMs: d.rebuildMs,
        snapshots: d.snapshots,
        maxStale: d.maxStale,
        freshnessMs: stats(d.freshness),
        rollupsMs: stats(await tierRollups(env, launched, launched + d.rebuildMs)),
        api: d.api,
        peakRssMiB: await peaks(restarted),
        loadPeakRssMiB: loadPeak,
        loadAverage: os.loadavg()[0]!,
      },
    };
  } finally {
    await tier.close();
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


/** GET /telemetry/streams every 250 ms: answered, failed, and the longest wait between two answers. */
interface ApiAnswers {
  answered: number;
  failed: number;
  longestGapMs: number;
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
  freshnessMs: Stats;
  /** The probes posted from the live loop's start to the rebuild's end (the restart's catch-up not in them). */
  liveFreshnessMs: Stats;
  /** The runs of the live loop (its `live: snapshot … rolled up in` lines) from its start to the rebuild's end. */
  liveRunsMs: Stats;
  /** GET /telemetry/streams every 250 ms from the ports' opening to the rebuild's end. */
  api: ApiAnswers;
  peakRssMiB: number;
  /** The highest RSS sampled from the live loop's start to the rebuild's end. */
  livePeakRssMiB: number;
  /** The load average (1 min) at the rebuild's end. */
  loadAverage: number;
  /** With --after: the same process right after the rebuild, the same load, as many probes as the rebuild had: freshness and live runs. */
  after?: { freshnessMs: Stats; liveRunsMs: Stats; loadAverage: number };
}

/** The current snapshot's asOf and stale states (null: none readable). */
async function currentStale(): Promise<{ asOf: number; stale: number; snapshot: string } | null> {
  const current = await readCurrent(layout).catch(() => null);
  if (!current) return null;
  const manifest = await readSnapshotManifest(snapshotFiles(publishedDir(layout, current.snapshot)).manifest);
  return { asOf: Date.parse(current.asOf), stale: manifest.partitionStates?.stale ?? 0, snapshot: current.snapshot };
}

/**
 * A deployment measured from `launched` until CURRENT's first snapshot as of then with no stale
 * state: the background load, probes (at least `--probes`; `tagged()` at a probe's posting puts it
 * in `taggedFreshness` too), the API asked every 250 ms; throws if one of `procs` exits.
 */
async function untilNoStale(target: Target, launched: number, procs: Proc[], firstProbe: number, tagged: () => boolean = () => false) {
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
      for (const p of procs) if (p.child.exitCode !== null) throw new Error(`${p.name} exited ${p.child.exitCode}: ${p.output().slice(-2000)}`);
      await sleep(250);
    }
    return NaN;
  })();
  const api: ApiAnswers = { answered: 0, failed: 0, longestGapMs: 0 };
  const asking = (async () => {
    let last = Date.now();
    while (!over) {
      const ok = await fetch(`${target.api}/telemetry/streams?window=1h`, { headers: { Authorization: `Bearer ${target.token}` } }).then((r) => r.ok, () => false);
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
  const load = bench.backgroundLoad(target, Number(opts.rate), () => stopping);
  const freshness: number[] = [];
  const taggedFreshness: number[] = [];
  const probes: Promise<void>[] = [];
  let rebuildMs = NaN;
  void watch.then((ms) => (rebuildMs = ms), () => {});
  for (let n = 0; Number.isNaN(rebuildMs) || n < Number(opts.probes); n++) {
    const tag = Number.isNaN(rebuildMs) && tagged();
    probes.push(probe(target, firstProbe + n).then((ms) => void (freshness.push(ms), tag && taggedFreshness.push(ms))));
    await sleep(Number(opts.probeEvery) * 1000);
    // A process's exit ends the measure.
    if (procs.some((p) => p.child.exitCode !== null)) break;
  }
  await Promise.all(probes);
  try {
    await watch;
  } finally {
    over = true;
    stopping = true;
    await Promise.all([load, asking]);
  }
  return { rebuildMs, firstSnapshotMs, snapshots: seen.size, maxStale, api, freshness, taggedFreshness };
}

/** Stop `prev`, launch `start` with `env`, and measure until the first snapshot of the new process with no stale state. */
async function restart(name: string, prev: Proc, token: string, env: NodeJS.ProcessEnv): Promise<{ proc: Proc; target: Target; result: RestartResult }> {
  await stop(prev, 'SIGINT');
  const launched = Date.now();
  const proc = bench.launch(name, ['start', '--warehouse', dir, '--port', '0', '--collector-port', '0'], env);
  const open = await waitForOutput(proc, /^API on (\S+) and collector on (\S+) answer now/m);
  const portsOpenMs = Date.now() - launched;
  const partial: Target = { api: open[1]!, collector: open[2]!, token, key: '', customer: '' };
  // The sample key and customer are the previous process's (kept across starts): read from its output.
  const before = prev.output();
  partial.key = before.split('\n')[before.split('\n').findIndex((l) => /ingest key of \S+ \(public/.test(l)) + 1]!.trim();
  partial.customer = /ingest key of (\S+) \(public/.exec(before)![1]!;
  let liveMs = NaN;
  let liveRss: (() => Promise<Record<string, number>>) | null = null;
  void waitForOutput(proc, /^live: a rollup runs/m).then(
    () => {
      liveMs = Date.now() - launched;
      liveRss = sampleRss([proc]);
    },
    () => {},
  );
  // Probes posted once the live loop runs and before the rebuild's end: freshness during the rebuild proper.
  const d = await untilNoStale(partial, launched, [proc], 1000, () => !Number.isNaN(liveMs));
  const sampledLive: (() => Promise<Record<string, number>>) | null = liveRss;
  const result: RestartResult = {
    name,
    portsOpenMs,
    liveMs,
    rebuildMs: d.rebuildMs,
    snapshots: d.snapshots,
    maxStale: d.maxStale,
    freshnessMs: stats(d.freshness),
    liveFreshnessMs: stats(d.taggedFreshness),
    liveRunsMs: stats(liveRuns(proc, launched + liveMs, launched + d.rebuildMs)),
    api: d.api,
    peakRssMiB: await peakRssMiB(proc),
    livePeakRssMiB: sampledLive ? (await (sampledLive as () => Promise<Record<string, number>>)())[name]! : NaN,
    loadAverage: os.loadavg()[0]!,
  };
  return { proc, target: partial, result };
}

/** `start` steady, then the restarts of `--deploys`: a deployment that changes the state SQL (background), the same with the blocking rebuild, a plain restart. */
async function runDeployMode(): Promise<{ steady: ModeResult & { loadAverage: number }; restarts: RestartResult[] }> {
  const kinds = opts.deploys.split(',');
  for (const kind of kinds) if (!['background', 'blocking', 'plain'].includes(kind)) throw new Error(`--deploys: background, blocking or plain, not ${kind}`);
  process.stderr.write('deploy: p2ptel start, steady ...\n');
  const first = await bench.startStart();
  const ready = { start: await peakRssMiB(first.proc) };
  const sampled = sampleRss([first.proc]);
  const m = await measure(first.target);
  const load = await sampled();
  const peak = { start: await peakRssMiB(first.proc) };
  const steady = { ...summarize('start', m, liveRuns(first.proc, m.from), { peak, ready, load }), loadAverage: os.loadavg()[0]! };
  const salt = `bench-${Date.now()}`;
  const restarts: RestartResult[] = [];
  let prev = first.proc;
  // The state SQL's current version: a plain restart keeps the last deployment's.
  let code: string | undefined;
  for (const kind of kinds) {
    if (kind === 'plain') process.stderr.write('deploy: plain restart ...\n');
    else {
      process.stderr.write(`deploy: restart with other state SQL${kind === 'blocking' ? ', ROLLUP_REBUILD_BUDGET=0 (blocking)' : ' (the rebuild in the background)'} ...\n`);
      code = `${salt}-${restarts.length}`;
    }
    // BENCH_RESTART_SQL_TRACE=1: the restarted processes only trace their statements (P2PTEL_SQL_TRACE; the first one's
    // output must keep the lines the restarts read from it).
    const trace = process.env['BENCH_RESTART_SQL_TRACE'] === '1' ? { P2PTEL_SQL_TRACE: '1' } : {};
    const env = { ...process.env, ...trace, ...(code ? { P2PTEL_TEST_STATE_CODE_SALT: code } : {}), ...(kind === 'blocking' ? { ROLLUP_REBUILD_BUDGET: '0' } : {}) };
    const r = await restart(kind === 'plain' ? 'plain restart' : `deploy ${kind}`, prev, first.target.token, env);
    if (opts.after && kind !== 'plain') {
      const count = Math.max(Number(opts.probes), r.result.liveFreshnessMs.n);
      process.stderr.write(`deploy: the same process after its rebuild, ${count} probes ...\n`);
      const m = await measure(r.target, count, 5000 + 1000 * restarts.length);
      r.result.after = { freshnessMs: stats(m.freshness), liveRunsMs: stats(liveRuns(r.proc, m.from)), loadAverage: os.loadavg()[0]! };
    }
    restarts.push(r.result);
    prev = r.proc;
  }
  await stop(prev, 'SIGINT');
  return { steady, restarts };
}

const sec = (ms: number, digits = 1) => `${(ms / 1000).toFixed(digits)} s`;

function describeRestart(r: RestartResult): string {
  const f = r.freshnessMs;
  const lf = r.liveFreshnessMs;
  const runs = r.liveRunsMs;
  return (
    `  ${r.name}: ports ${sec(r.portsOpenMs)}, live loop ${sec(r.liveMs)}, no stale state ${sec(r.rebuildMs)} (${r.snapshots} snapshots, up to ${r.maxStale} stale); ` +
    `freshness ${f.n} probes p50 ${sec(f.p50)}, p95 ${sec(f.p95)}, max ${sec(f.max)}; API ${r.api.answered} answers, ${r.api.failed} failed, longest gap ${sec(r.api.longestGapMs)}; peak RSS ${r.peakRssMiB} MiB\n` +
    `    from the live loop to no stale state (${sec(r.rebuildMs - r.liveMs)}): freshness ${lf.n} probes p50 ${sec(lf.p50)}, p95 ${sec(lf.p95)}, max ${sec(lf.max)}; ` +
    `runs ${runs.n}, p50 ${sec(runs.p50, 2)}, p95 ${sec(runs.p95, 2)}, max ${sec(runs.max, 2)}; RSS sampled up to ${r.livePeakRssMiB} MiB; load average ${r.loadAverage.toFixed(1)}` +
    (r.after
      ? `\n    after the rebuild, the same process and load (--after): freshness ${r.after.freshnessMs.n} probes p50 ${sec(r.after.freshnessMs.p50)}, p95 ${sec(r.after.freshnessMs.p95)}, max ${sec(r.after.freshnessMs.max)}; ` +
        `runs ${r.after.liveRunsMs.n}, p50 ${sec(r.after.liveRunsMs.p50, 2)}, p95 ${sec(r.after.liveRunsMs.p95, 2)}; load average ${r.after.loadAverage.toFixed(1)}; ` +
        `during ÷ after: freshness p95 ${(lf.p95 / r.after.freshnessMs.p95).toFixed(2)}×, runs p50 ${(runs.p50 / r.after.liveRunsMs.p50).toFixed(2)}×`
      : '')
  );
}

const history = `${opts.days} days × ${Number(opts.customers) * Number(opts.streams)} streams of history, ${opts.rate} reports/s in the background${cli.tiny ? ' (--tiny: a check that it runs, not a measure)' : ''}`;
await bench.ensureHistory(opts);
if (opts.mode === 'deploy-workers') {
  const w = await runWorkersMode(true);
  const d = w.deploy!;
  process.stdout.write(
    [
      `live benchmark, a deployment of the worker tier: ${history}`,
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
      `live benchmark, deployments: ${history}`,
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
process.stdout.write([`live benchmark: ${history}`, ...modes.flatMap(describe)].join('\n') + '\n');
const file = await writeResult(cli.tiny ? 'live-tiny' : 'live', result);
process.stdout.write(`  (${path.relative(PROJECT_ROOT, file)})\n`);
process.exit(0);
