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
//            first process's steady freshness.
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
import path from 'node:path';
import { Command } from 'commander';
import { PROJECT_ROOT } from '../lib/version.ts';
import { publishedDir, readCurrent, snapshotFiles } from '../warehouse/snapshots/index.ts';
import { readSnapshotManifest } from '../warehouse/snapshots/index.ts';
import { HOUR, LiveBench, command, peakRssMiB, peaks, percentile, probe, sampleRss, sleep, stop, waitForOutput, type Proc, type Target } from './live-harness.ts';
import { writeResult } from './report.ts';

const cli = new Command()
  .option('--mode <mode>', 'start, workers, both (one after the other), or deploy (restarts of start as deployments)', 'both')
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
  .option('--one-report-sessions', 'the background load posts every report as a session of its own (rate new sessions a second) instead of sessions reporting every 30 s')
  .parse()
  .opts<{ mode: string; tiny?: boolean; dir?: string; days: string; customers: string; streams: string; sessions: string; rate: string; probes: string; probeEvery: string; rollupEvery: string; oneReportSessions?: boolean; crossHour?: boolean; logs?: string }>();
const TINY = { days: '1', customers: '2', streams: '2', sessions: '40', rate: '200', probes: '4', probeEvery: '2' };
const opts = cli.tiny ? { ...cli, ...TINY } : cli;
if (!['start', 'workers', 'both', 'deploy'].includes(opts.mode)) throw new Error(`--mode: start, workers, both or deploy, not ${opts.mode}`);

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

/** The background load and the probes against a target, until every probe is counted. */
async function measure(target: Target): Promise<Measured> {
  if (opts.crossHour) await untilHourCrossing();
  let stopping = false;
  const from = Date.now();
  const load = bench.backgroundLoad(target, Number(opts.rate), () => stopping);
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
  const { proc, target } = await bench.startStart();
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

/** The worker tier on this machine: Redis, two workers, a collector and an API, with the live settings (docs/operations.md). */
async function runWorkersMode(): Promise<ModeResult> {
  const tier = await bench.startWorkerTier(opts.rollupEvery, 'bench:live workers');
  try {
    const { procs, env } = tier;
    const ready = await peaks(procs);
    const sampled = sampleRss(procs);
    const m = await measure(tier.target);
    const load = await sampled();
    const rss = { peak: await peaks(procs), ready, load };
    const runs = JSON.parse(await command(['runs', '--json', '--limit', '2000'], env)) as { kind: string; state: string; startedAt: number | null; durationMs: number | null }[];
    const rollups = runs.filter((r) => r.kind === 'rollup' && r.state === 'completed' && (r.startedAt ?? 0) >= m.from).map((r) => r.durationMs!);
    return summarize('workers', m, rollups, rss);
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
  /** GET /telemetry/streams every 250 ms from the ports' opening to the rebuild's end: answered, failed, and the longest wait between two answers. */
  api: { answered: number; failed: number; longestGapMs: number };
  peakRssMiB: number;
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
  const proc = bench.launch(name, ['start', '--warehouse', dir, '--port', '0', '--collector-port', '0'], env);
  const open = await waitForOutput(proc, /^API on (\S+) and collector on (\S+) answer now/m);
  const portsOpenMs = Date.now() - launched;
  const partial: Target = { api: open[1]!, collector: open[2]!, token, key: '', customer: '' };
  // The sample key and customer are the previous process's (kept across starts): read from its output.
  const before = prev.output();
  partial.key = before.split('\n')[before.split('\n').findIndex((l) => /ingest key of \S+ \(public/.test(l)) + 1]!.trim();
  partial.customer = /ingest key of (\S+) \(public/.exec(before)![1]!;
  let over = false;
  let liveMs = NaN;
  void waitForOutput(proc, /^live: a rollup runs/m).then(() => (liveMs = Date.now() - launched), () => {});
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
  const load = bench.backgroundLoad(partial, Number(opts.rate), () => stopping);
  const freshness: number[] = [];
  const probes: Promise<void>[] = [];
  let rebuildMs = NaN;
  void watch.then((ms) => (rebuildMs = ms));
  for (let n = 0; Number.isNaN(rebuildMs) || n < Number(opts.probes); n++) {
    probes.push(probe(partial, 1000 + n).then((ms) => void freshness.push(ms)));
    await sleep(Number(opts.probeEvery) * 1000);
  }
  await Promise.all(probes);
  await watch;
  over = true;
  stopping = true;
  await Promise.all([load, asking]);
  const f = freshness;
  const result: RestartResult = {
    name,
    portsOpenMs,
    liveMs,
    rebuildMs,
    snapshots: seen.size,
    maxStale,
    freshnessMs: { p50: percentile(f, 50), p95: percentile(f, 95), max: Math.max(...f), n: f.length },
    api,
    peakRssMiB: await peakRssMiB(proc),
  };
  return { proc, target: partial, result };
}

/** `start` steady, then three restarts: a deployment that changes the state SQL, the same with the blocking rebuild, and a plain restart. */
async function runDeployMode(): Promise<{ steady: ModeResult; restarts: RestartResult[] }> {
  process.stderr.write('deploy: p2ptel start, steady ...\n');
  const first = await bench.startStart();
  const m = await measure(first.target);
  const peak = { start: await peakRssMiB(first.proc) };
  // The deploy mode times restarts; the steady phase's peak stands for all three phases' figures.
  const steady = summarize('start', m, [], { peak, ready: peak, load: peak });
  const salt = `bench-${Date.now()}`;
  const restarts: RestartResult[] = [];
  process.stderr.write('deploy: restart with other state SQL (the rebuild in the background) ...\n');
  const a = await restart('deploy background', first.proc, first.target.token, { ...process.env, P2PTEL_TEST_STATE_CODE_SALT: `${salt}-a` });
  restarts.push(a.result);
  process.stderr.write('deploy: restart with other state SQL, ROLLUP_REBUILD_BUDGET=0 (blocking) ...\n');
  const b = await restart('deploy blocking', a.proc, first.target.token, { ...process.env, P2PTEL_TEST_STATE_CODE_SALT: `${salt}-b`, ROLLUP_REBUILD_BUDGET: '0' });
  restarts.push(b.result);
  process.stderr.write('deploy: plain restart ...\n');
  const c = await restart('plain restart', b.proc, first.target.token, { ...process.env, P2PTEL_TEST_STATE_CODE_SALT: `${salt}-b` });
  restarts.push(c.result);
  await stop(c.proc, 'SIGINT');
  return { steady, restarts };
}

function describeRestart(r: RestartResult): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const f = r.freshnessMs;
  return (
    `  ${r.name}: ports ${s(r.portsOpenMs)}, live loop ${s(r.liveMs)}, no stale state ${s(r.rebuildMs)} (${r.snapshots} snapshots, up to ${r.maxStale} stale); ` +
    `freshness ${f.n} probes p50 ${s(f.p50)}, p95 ${s(f.p95)}, max ${s(f.max)}; API ${r.api.answered} answers, ${r.api.failed} failed, longest gap ${s(r.api.longestGapMs)}; peak RSS ${r.peakRssMiB} MiB`
  );
}

await bench.ensureHistory(opts);
if (opts.mode === 'deploy') {
  const d = await runDeployMode();
  process.stdout.write(
    [
      `live benchmark, deployments: ${opts.days} days × ${Number(opts.customers) * Number(opts.streams)} streams of history, ${opts.rate} reports/s in the background${cli.tiny ? ' (--tiny: a check that it runs, not a measure)' : ''}`,
      ...describe(d.steady),
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
