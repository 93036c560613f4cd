// npm run bench:incremental -- [--dir DIR] [--days 30] [--customers 10] [--streams 10] [--sessions 1350] [--no-verify]
// The incremental warehouse against a full run, in one process, over generated data (30 days of
// 100 streams, ~6 M reports by default, generated once by `cli generate` in a child process):
//   1. a bare DuckDB scan-and-group over the same files (distinct sessions and byte sums per
//      stream): the floor a full run is compared with;
//   2. a from-scratch run (no partition state);
//   3. a run after one new hour of files landed plus one late file into a day ten days back;
//   4. a rerun with nothing new (the next 5-minute tick, the first of an hour), and the tick after;
//   5. (verify) a `--rebuild` run at the asOf of the tick after, whose snapshot must equal that tick's exactly.
// Beside the bare scan, two floors of what any exact full run must do, timed the same way: the
// deduplication alone (every reportId hashed: a count of the distinct ones), and the grouping by
// stream, session and minute that the 60 s series' session counts need.
// Prints times, ratios against the goals of issue 10 and peak RSS (VmHWM of this process).
// --against <commit> [--runs K]: instead, this checkout against that commit (built in a temporary
// worktree, bench/ab.ts), each step a `p2ptel pipeline` child process on a fresh hard-linked copy of
// the same files, alternately for K rounds after a warm-up round: (1) the from-scratch run at the
// period's end, (2) a tick 5 minutes later after a file of late reports into the last day (the
// first tick that adds to the day's states after a full run), (3) a tick 5 minutes after that,
// after another such file (the live path's usual tick); medians, ratios and peak RSS of each.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { PROJECT_ROOT } from '../lib/version.ts';
import { openJobDeps } from '../jobs/deps.ts';
import { runPipeline, type PipelineResult } from '../jobs/pipeline.ts';
import { discoverLanding } from '../warehouse/landing/index.ts';
import { fileList, quotedString } from '../warehouse/duckdb/index.ts';
import { publishedDir, snapshotFiles } from '../warehouse/snapshots/index.ts';
import { describeRatio, writeResult } from './report.ts';
import { buildAgainst, compareSnapshots, linkCopy, runChild, summarize, takesFlag, thisBuild, abLine, abRatios, disposeOnSignal, type ChildRun } from './ab.ts';
import { warehouseLayout } from '../warehouse/layout.ts';

const opts = new Command()
  .option('--dir <dir>', 'warehouse folder (generated into when empty)', path.join(PROJECT_ROOT, 'bench', 'output', 'incremental'))
  .option('--days <n>', 'days of history', '30')
  .option('--customers <n>', 'customers', '10')
  .option('--streams <n>', 'streams per customer', '10')
  .option('--sessions <n>', 'sessions per stream over the period', '1350')
  .option('--no-verify', 'skip the --rebuild run that checks the incremental snapshot to the last digit')
  .option('--against <commit>', 'A/B: this checkout against that commit, each step a child process')
  .option('--runs <k>', 'with --against: timed rounds', '3')
  .parse()
  .opts<{ dir: string; days: string; customers: string; streams: string; sessions: string; verify: boolean; against?: string; runs: string }>();

const HOUR = 3_600_000;
const days = Number(opts.days);
const customers = Array.from({ length: Number(opts.customers) }, (_, i) => `c${i + 1}`);
const start = new Date('2026-10-01T00:00:00Z');
const end = new Date(start.getTime() + days * 24 * HOUR);
const dir = path.resolve(opts.dir);
const run = promisify(execFile);

async function generate(args: string[]): Promise<void> {
  await run(process.execPath, [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'generate', '--warehouse', dir, ...args], {
    maxBuffer: 64 * 1024 * 1024,
  });
}

function peakRssMb(): Promise<number> {
  return fs.readFile('/proc/self/status', 'utf8').then((t) => Number(/VmHWM:\s+(\d+)/.exec(t)![1]) / 1024);
}

const config = loadConfig({ overrides: { WAREHOUSE_DIR: dir } });
const deps = await openJobDeps(config, silentLogger);

if ((await discoverLanding(deps.layout)).files.length === 0) {
  process.stderr.write(`generating ${days} days × ${customers.length * Number(opts.streams)} streams into ${dir} ...\n`);
  await generate([
    '--customers', customers.join(','), '--streams', opts.streams, '--sessions', opts.sessions,
    '--start', start.toISOString(), '--hours', String(days * 24), '--seed', '7',
  ]);
}

/** --against: the three steps of each build, alternately, on copies of the same files. */
async function abIncremental(ref: string, rounds: number): Promise<void> {
  // The late files of steps 2 and 3, generated once beside the warehouse, then linked into each copy.
  const late = `${dir}-ab-late`;
  const lateLayout = warehouseLayout(late);
  if ((await discoverLanding(lateLayout)).files.length === 0) {
    for (const seed of [11, 12]) {
      await run(process.execPath, [
        path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'generate', '--warehouse', late, '--customers', customers.join(','), '--streams', opts.streams,
        '--sessions', String(Math.max(1, Math.round(Number(opts.sessions) / (days * 24)))), '--start', new Date(end.getTime() - HOUR).toISOString(), '--hours', '1', '--seed', String(seed),
      ]);
    }
  }
  const lateFiles = (await discoverLanding(lateLayout)).files;
  const bySeed = (seed: number) => lateFiles.filter((f) => path.basename(f.path).includes(`gen-${seed}-`));
  if (bySeed(11).length === 0 || bySeed(12).length === 0) throw new Error(`late files not named gen-<seed>-*: ${lateFiles.slice(0, 3).map((f) => f.path).join(', ')}`);
  const builds = [await thisBuild(), await buildAgainst(ref)];
  disposeOnSignal(builds);
  try {
    const flags = await Promise.all(builds.map(async (b) => ((await takesFlag(b, 'pipeline', '--no-compact')) ? ['--no-compact'] : [])));
    const sideDir = (i: number) => path.join(`${dir}-ab`, `side-${i}`);
    const steps = ['from scratch', 'first tick after late files', 'next tick after late files'];
    const timed: ChildRun[][][] = [[[], [], []], [[], [], []]];
    const pipeline = (i: number, at: Date) => runChild(builds[i]!, ['pipeline', ...flags[i]!, '--as-of', at.toISOString(), '--warehouse', sideDir(i)]);
    const land = async (i: number, files: readonly { path: string }[]) => {
      for (const f of files) {
        const to = path.join(warehouseLayout(sideDir(i)).rawReports, path.relative(lateLayout.rawReports, f.path));
        await fs.mkdir(path.dirname(to), { recursive: true });
        await fs.link(f.path, to);
      }
    };
    for (let round = 0; round <= rounds; round++) {
      for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
        await fs.rm(sideDir(i), { recursive: true, force: true });
        await linkCopy(deps.layout.rawReports, warehouseLayout(sideDir(i)).rawReports);
        const rs = [await pipeline(i, end)];
        await land(i, bySeed(11));
        rs.push(await pipeline(i, new Date(end.getTime() + 5 * 60_000)));
        await land(i, bySeed(12));
        rs.push(await pipeline(i, new Date(end.getTime() + 10 * 60_000)));
        if (round > 0) rs.forEach((r, k) => timed[i]![k]!.push(r));
        process.stderr.write(`${round === 0 ? 'warm-up' : `round ${round}/${rounds}`}: ${builds[i]!.label} ${builds[i]!.commit} ${rs.map((r) => `${r.seconds.toFixed(2)} s (CPU ${r.cpuSeconds.toFixed(2)} s) ${r.peakRssMb.toFixed(0)} MiB`).join(' | ')}\n`);
      }
    }
    const cmp = await compareSnapshots(deps.db, sideDir(0), sideDir(1));
    const sums = timed.map((side) => side.map(summarize));
    const result = {
      benchmark: 'incremental-ab',
      ratios: Object.fromEntries(steps.map((st, k) => [st, abRatios(sums[0]![k]!, sums[1]![k]!)])),
      dir,
      files: landed.files.length,
      rounds,
      this: { commit: builds[0]!.commit, steps: Object.fromEntries(steps.map((st, k) => [st, sums[0]![k]])) },
      against: { commit: builds[1]!.commit, steps: Object.fromEntries(steps.map((st, k) => [st, sums[1]![k]])) },
      snapshots: cmp,
    };
    process.stdout.write(
      [
        `incremental A/B: ${landed.files.length} files in ${dir}, ${rounds} rounds; this = ${builds[0]!.commit}, against = ${builds[1]!.commit}`,
        ...steps.map((st, k) => abLine(st, sums[0]![k]!, sums[1]![k]!)),
        `  snapshot files compared: ${cmp.files}, rows differing: ${cmp.differing}${cmp.incomparable.length > 0 ? `, not comparable (other columns or only in one): ${cmp.incomparable.length}` : ''}`,
      ].join('\n') + '\n',
    );
    await writeResult('incremental-ab', result);
    if (cmp.differing > 0) process.exitCode = 1;
  } finally {
    for (const b of builds) await b.dispose();
  }
}

// Every timed run starts from the same place: no state, no snapshot.
for (const p of [deps.layout.state, deps.layout.snapshots, deps.layout.reports, deps.layout.catalog]) await fs.rm(p, { recursive: true, force: true });
// The extra hour and the late file of a previous invocation go too.
for (const f of (await discoverLanding(deps.layout)).files) if (/gen-(8|9)-/.test(path.basename(f.path))) await fs.rm(f.path);

const landed = await discoverLanding(deps.layout);
if (opts.against) {
  await abIncremental(opts.against, Number(opts.runs));
  await deps.close();
  process.exit(process.exitCode ?? 0);
}

const glob = path.join(deps.layout.rawReports, '*', '*', '*.parquet');

const source = `read_parquet(${quotedString(glob)})`;

/** Seconds one DuckDB query over the landed files takes (its result read and dropped). */
async function scan(sql: string): Promise<number> {
  const t = performance.now();
  await deps.db.withSession((s) => s.all(sql));
  return (performance.now() - t) / 1000;
}

/** The floor a full run is compared with: distinct sessions and byte sums per stream. */
const bare = () =>
  scan(`SELECT streamId, count(DISTINCT sessionId) AS sessions, sum(bytesOffloaded) AS off, sum(bytesFallback) AS fb FROM ${source} GROUP BY streamId`);

async function timed(asOf: Date, rebuild = false): Promise<{ seconds: number; r: PipelineResult }> {
  const t = performance.now();
  const r = await runPipeline(deps, { asOf, rebuild });
  return { seconds: (performance.now() - t) / 1000, r };
}

const describe = (r: PipelineResult) => {
  const ps = r.manifest.partitionStates!;
  return `${ps.rebuilt} partitions rebuilt (${Object.entries(ps.reasons).map(([k, v]) => `${k}: ${v}`).join(', ') || '-'}), ${ps.reused} reused`;
};

await bare(); // warm the OS file cache for both sides
const bareSeconds = await bare();
process.stderr.write(`bare scan-and-group: ${bareSeconds.toFixed(2)} s\n`);

const full = await timed(end);
const reports = full.r.manifest.rows.reportsRead;
process.stderr.write(`from scratch: ${full.seconds.toFixed(2)} s, ${reports.toLocaleString('en-US')} reports, ${describe(full.r)}\n`);
const rssAfterFull = await peakRssMb();
// The floors after the peak of the from-scratch run is read: their hash tables are this process's too.
const dedupFloorSeconds = await scan(`SELECT count(DISTINCT reportId) AS n FROM ${source}`);
const minuteFloorSeconds = await scan(
  `SELECT count(*) AS n FROM (SELECT streamId, sessionId, epoch_us(ts) // 60000000 AS m, count(*) AS c, sum(bytesOffloaded) AS o FROM ${source} GROUP BY ALL)`,
);
process.stderr.write(`floors: distinct reportIds ${dedupFloorSeconds.toFixed(2)} s, session-minute grouping ${minuteFloorSeconds.toFixed(2)} s\n`);

// One more hour lands, and a late file into a day ten days back.
await generate([
  '--customers', customers.join(','), '--streams', opts.streams, '--sessions', String(Math.max(1, Math.round(Number(opts.sessions) / (days * 24)))),
  '--start', end.toISOString(), '--hours', '1', '--seed', '8',
]);
await generate(['--customers', customers[0]!, '--streams', '1', '--sessions', '3', '--start', new Date(end.getTime() - 10 * 24 * HOUR).toISOString(), '--hours', '1', '--seed', '9']);
const afterHour = new Date(end.getTime() + HOUR);
const inc = await timed(afterHour);
process.stderr.write(`after a new hour and a late file: ${inc.seconds.toFixed(2)} s, ${describe(inc.r)}\n`);

const tick = new Date(afterHour.getTime() + 5 * 60_000);
const rerun = await timed(tick);
process.stderr.write(`rerun with nothing new (next 5-minute tick): ${rerun.seconds.toFixed(2)} s, ${describe(rerun.r)}\n`);
// The first tick inside an hour computes the hours its window edges cut (from those partitions'
// raw files) and keeps them beside the states; the next eleven ticks of the hour reuse them.
const laterTickAt = new Date(tick.getTime() + 5 * 60_000);
const laterTick = await timed(laterTickAt);
process.stderr.write(`rerun with nothing new, the tick after: ${laterTick.seconds.toFixed(2)} s, ${describe(laterTick.r)}\n`);

let differences: number | null = null;
let rebuildSeconds: number | null = null;
if (opts.verify) {
  const rebuilt = await timed(laterTickAt, true);
  rebuildSeconds = rebuilt.seconds;
  differences = await symmetricDifference(laterTick.r.manifest.snapshot, rebuilt.r.manifest.snapshot);
  process.stderr.write(`--rebuild at the same asOf: ${rebuilt.seconds.toFixed(2)} s; rows that differ from the incremental snapshot: ${differences}\n`);
}

/** Rows in one snapshot's outputs and not in the other's, both ways, over every output. */
async function symmetricDifference(a: string, b: string): Promise<number> {
  const fa = snapshotFiles(publishedDir(deps.layout, a));
  const fb = snapshotFiles(publishedDir(deps.layout, b));
  const cs = full.r.manifest.partitions.map((p) => p.customerId);
  const pairs: [string, string][] = [
    [`read_parquet(${fileList(cs.map(fa.summaries))})`, `read_parquet(${fileList(cs.map(fb.summaries))})`],
    [`read_parquet(${fileList(cs.map(fa.series))}, hive_partitioning = false)`, `read_parquet(${fileList(cs.map(fb.series))}, hive_partitioning = false)`],
    [`read_parquet(${quotedString(fa.platform)})`, `read_parquet(${quotedString(fb.platform)})`],
    [`read_parquet(${quotedString(fa.customers)})`, `read_parquet(${quotedString(fb.customers)})`],
  ];
  let n = 0;
  await deps.db.withSession(async (s) => {
    for (const [x, y] of pairs) {
      const r = await s.one<{ n: number }>(
        `SELECT (SELECT count(*) FROM (SELECT * FROM ${x} EXCEPT ALL SELECT * FROM ${y})) + (SELECT count(*) FROM (SELECT * FROM ${y} EXCEPT ALL SELECT * FROM ${x})) AS n`,
      );
      n += r.n;
    }
  });
  return n;
}

const peak = await peakRssMb();
const result = {
  benchmark: 'incremental',
  dir,
  files: landed.files.length,
  reports,
  duckdbThreads: config.duckdb.threads,
  duckdbMemoryLimit: config.duckdb.memoryLimit,
  bareSeconds,
  floors: { distinctReportIdsSeconds: dedupFloorSeconds, sessionMinuteGroupingSeconds: minuteFloorSeconds },
  fromScratchSeconds: full.seconds,
  afterNewHourSeconds: inc.seconds,
  rerunSeconds: rerun.seconds,
  rerunLaterTickSeconds: laterTick.seconds,
  rebuildSeconds,
  ratios: {
    afterNewHour: inc.seconds / full.seconds,
    rerun: rerun.seconds / full.seconds,
    rerunLaterTick: laterTick.seconds / full.seconds,
    fromScratchVsBare: full.seconds / bareSeconds,
  },
  peakRssMb: { afterFromScratch: rssAfterFull, end: peak },
  differences,
};
process.stdout.write(
  [
    `incremental benchmark: ${reports.toLocaleString('en-US')} reports in ${landed.files.length} files, DuckDB threads ${config.duckdb.threads}, memory limit ${config.duckdb.memoryLimit}`,
    `  bare scan-and-group          ${bareSeconds.toFixed(2)} s`,
    `  floors of an exact full run: distinct reportIds alone ${dedupFloorSeconds.toFixed(2)} s (${(dedupFloorSeconds / bareSeconds).toFixed(1)}× the bare scan), the session-minute grouping of the 60 s series ${minuteFloorSeconds.toFixed(2)} s (${(minuteFloorSeconds / bareSeconds).toFixed(1)}×)`,
    `  from scratch                 ${full.seconds.toFixed(2)} s   (${describe(full.r)})`,
    `  after a new hour + late file ${inc.seconds.toFixed(2)} s   (${describe(inc.r)})`,
    `  rerun, nothing new           ${rerun.seconds.toFixed(2)} s   (${describe(rerun.r)}; the first tick of an hour: its cut hours computed)`,
    `  the tick after               ${laterTick.seconds.toFixed(2)} s   (${describe(laterTick.r)}; cut hours reused)`,
    `  ${describeRatio('after new hour / from scratch', result.ratios.afterNewHour, 0.05)}`,
    `  ${describeRatio('rerun / from scratch', result.ratios.rerun, 0.03)}`,
    `  ${describeRatio('the tick after / from scratch', result.ratios.rerunLaterTick, 0.03)}`,
    `  ${describeRatio('from scratch / bare scan', result.ratios.fromScratchVsBare, 4)}`,
    `  peak RSS: ${rssAfterFull.toFixed(0)} MB after the from-scratch run, ${peak.toFixed(0)} MB at the end`,
    differences === null ? '  (not verified against --rebuild)' : `  rows differing from a --rebuild snapshot: ${differences}`,
  ].join('\n') + '\n',
);
await writeResult('incremental', result);
await deps.close();
if (differences !== null && differences > 0) process.exitCode = 1;
