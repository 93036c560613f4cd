// npm run bench:rollup -- [--reports N] [--runs K] [--against <commit> [--dir WAREHOUSE --as-of ISO]]
// Times a full rollup run (cli pipeline --rebuild: validation, partition states, snapshot, catalog) and, in the
// same process and alternating with it, a bare DuckDB script computing the same figures straight
// from the raw files (bench/baseline-rollup.sql). Prints reports/s of both and their ratio.
// --against <commit>: instead, this checkout's full run against that commit's (built in a temporary
// worktree), each a `p2ptel pipeline --rebuild` child process on a fresh hard-linked copy of the
// same landed files (the generated ones, or those of --dir), alternately for --runs rounds after one
// warm-up round: medians, ratios and each side's peak RSS (bench/ab.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { TIMESTAMP } from '@duckdb/node-api';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { PROJECT_ROOT } from '../lib/version.ts';
import { openJobDeps } from '../jobs/deps.ts';
import { runPipeline } from '../jobs/pipeline.ts';
import { generateReports } from '../warehouse/sample/index.ts';
import { timestampParam } from '../warehouse/duckdb/index.ts';
import { fillSql, quotedString } from '../warehouse/duckdb/index.ts';
import { discoverLanding } from '../warehouse/landing/index.ts';
import { currentSnapshot, readStreamSummaries, type StreamSummary } from '../warehouse/snapshots/index.ts';
import { describeRatio, median, writeResult } from './report.ts';
import { abLine, buildAgainst, compareSnapshots, linkCopy, runChild, summarize, takesFlag, thisBuild, abRatios, disposeOnSignal, type ChildRun, type StepSummary } from './ab.ts';
import { warehouseLayout } from '../warehouse/layout.ts';

const opts = new Command()
  .option('--reports <n>', 'reports to generate (about)', '5000000')
  .option('--runs <k>', 'timed runs of each side', '3')
  .option('--against <commit>', 'A/B: this checkout against that commit, each a child process')
  .option('--dir <dir>', 'with --against: a warehouse whose landed files to run on (instead of generated ones)')
  .option('--as-of <iso>', 'with --dir: the runs\' asOf (default: the end of the generated period)')
  .parse()
  .opts<{ reports: string; runs: string; against?: string; dir?: string; asOf?: string }>();
const targetReports = Number(opts.reports);
const runs = Number(opts.runs);

const CUSTOMERS = ['acme', 'globex', 'initech'];
const STREAMS = 10;
const HOURS = 30;
// A session of this generator sends about 44 reports over a 30-hour period.
const sessions = Math.max(1, Math.round(targetReports / 44 / (CUSTOMERS.length * STREAMS)));
const start = new Date('2026-11-19T00:00:00Z');

const asOf = opts.asOf ? new Date(opts.asOf) : new Date(start.getTime() + HOURS * 3_600_000);
const dir = opts.dir ? path.resolve(opts.dir) : path.join(PROJECT_ROOT, 'bench', 'output', `rollup-${sessions}`);
const config = loadConfig({ overrides: { WAREHOUSE_DIR: dir } });
const deps = await openJobDeps(config, silentLogger);

if ((await discoverLanding(deps.layout)).files.length === 0) {
  process.stderr.write(`generating about ${targetReports.toLocaleString('en-US')} reports in ${dir} ...\n`);
  const g = await generateReports(deps.db, deps.layout, { customers: CUSTOMERS, streams: STREAMS, sessions, start, hours: HOURS, seed: 2026 });
  process.stderr.write(`generated ${g.reports.toLocaleString('en-US')} reports\n`);
}

if (opts.against) {
  await abRollup(opts.against);
  await deps.close();
  process.exit(process.exitCode ?? 0);
}

/** --against: this build's full run against `ref`'s, alternately, on copies of the same files. */
async function abRollup(ref: string): Promise<void> {
  const builds = [await thisBuild(), await buildAgainst(ref)];
  disposeOnSignal(builds);
  try {
    const flags = await Promise.all(builds.map(async (b) => ((await takesFlag(b, 'pipeline', '--no-compact')) ? ['--no-compact'] : [])));
    const landed = await discoverLanding(deps.layout);
    const work = path.join(dir, 'ab');
    const sideDir = (i: number) => path.join(work, `side-${i}`);
    const once = async (i: number) => {
      await fs.rm(sideDir(i), { recursive: true, force: true });
      await linkCopy(deps.layout.rawReports, warehouseLayout(sideDir(i)).rawReports);
      return runChild(builds[i]!, ['pipeline', '--rebuild', ...flags[i]!, '--as-of', asOf.toISOString(), '--warehouse', sideDir(i)]);
    };
    const timed: ChildRun[][] = [[], []];
    for (let round = 0; round <= runs; round++) {
      // Warm-up round first (not counted); then A B, B A, ... so that neither side always goes first.
      for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const r = await once(i);
        if (round > 0) timed[i]!.push(r);
        process.stderr.write(`${round === 0 ? 'warm-up' : `round ${round}/${runs}`}: ${builds[i]!.label} ${builds[i]!.commit} ${r.seconds.toFixed(2)} s, CPU ${r.cpuSeconds.toFixed(2)} s, peak RSS ${r.peakRssMb.toFixed(0)} MiB\n`);
      }
    }
    const cmp = await compareSnapshots(deps.db, sideDir(0), sideDir(1));
    const [a, b] = timed.map(summarize) as [StepSummary, StepSummary];
    const result = {
      benchmark: 'rollup-ab',
      dir,
      files: landed.files.length,
      asOf: asOf.toISOString(),
      runs,
      this: { commit: builds[0]!.commit, ...a },
      against: { commit: builds[1]!.commit, ...b },
      ratio: abRatios(a, b),
      snapshots: cmp,
    };
    process.stdout.write(
      [
        `rollup A/B: ${landed.files.length} files in ${dir}, asOf ${asOf.toISOString()}, ${runs} rounds; this = ${builds[0]!.commit}, against = ${builds[1]!.commit}`,
        abLine('full run (pipeline --rebuild)', a, b),
        `  snapshot files compared: ${cmp.files}, rows differing: ${cmp.differing}${cmp.incomparable.length > 0 ? `, not comparable (other columns or only in one): ${cmp.incomparable.length}` : ''}`,
      ].join('\n') + '\n',
    );
    await writeResult('rollup-ab', result);
    if (cmp.differing > 0) process.exitCode = 1;
  } finally {
    for (const b of builds) await b.dispose();
  }
}

const baselineSql = await fs.readFile(path.join(PROJECT_ROOT, 'bench', 'baseline-rollup.sql'), 'utf8');
const baselineOut = path.join(dir, 'baseline');
await fs.mkdir(baselineOut, { recursive: true });

async function baseline(): Promise<number> {
  const t = performance.now();
  await deps.db.withSession(async (s) => {
    const script = fillSql(baselineSql, {
      raw: quotedString(path.join(deps.layout.rawReports, '*', '*', '*.parquet')),
      summaries_out: quotedString(path.join(baselineOut, 'summaries.parquet')),
      series_out: quotedString(path.join(baselineOut, 'series.parquet')),
      platform_out: quotedString(path.join(baselineOut, 'platform.parquet')),
    });
    const statements = script
      .split(/;\s*\n\s*\n/)
      .map((x) => x.replace(/^--.*$/gm, '').trim())
      .filter(Boolean);
    for (const stmt of statements) {
      const params: Record<string, unknown> = {};
      if (stmt.includes('$as_of')) params['as_of'] = timestampParam(asOf);
      if (stmt.includes('$horizon_seconds')) params['horizon_seconds'] = config.activityHorizonSeconds;
      await s.run(stmt, params as never, params['as_of'] ? { as_of: TIMESTAMP } : {});
    }
  });
  return (performance.now() - t) / 1000;
}

async function ours(): Promise<{ seconds: number; reports: number }> {
  const t = performance.now();
  // A full run every time (every partition state rebuilt): the same work as the baseline's.
  // A rerun with nothing new reuses every state; bench:incremental times that.
  const r = await runPipeline(deps, { asOf, rebuild: true });
  return { seconds: (performance.now() - t) / 1000, reports: r.manifest.rows.reportsRead };
}

// Warm the OS file cache once for both, then alternate so that machine noise hits both alike.
await baseline();
let reports = (await ours()).reports;
const oursTimes: number[] = [];
const baseTimes: number[] = [];
for (let i = 0; i < runs; i++) {
  const o = await ours();
  reports = o.reports;
  oursTimes.push(o.seconds);
  baseTimes.push(await baseline());
  process.stderr.write(`run ${i + 1}/${runs}: pipeline ${o.seconds.toFixed(2)} s, baseline ${baseTimes.at(-1)!.toFixed(2)} s\n`);
}

// The two sides must agree on the figures, or the comparison means nothing.
const snap = (await currentSnapshot(deps.layout))!;
const summaries = await readStreamSummaries(deps.db, snap);
const mismatches = await deps.db.withSession(async (s) => {
  const base = await s.all<Pick<StreamSummary, 'windowName' | 'streamId' | 'totalSessions' | 'totalBytesOffloaded' | 'totalBytesFallback' | 'avgPeerCount'>>(
    `SELECT windowName, streamId, totalSessions, totalBytesOffloaded, totalBytesFallback, avgPeerCount FROM read_parquet(${quotedString(path.join(baselineOut, 'summaries.parquet'))})`,
  );
  let bad = 0;
  for (const b of base) {
    const o = summaries.find((x) => x.windowName === b.windowName && x.streamId === b.streamId);
    if (
      !o ||
      o.totalSessions !== b.totalSessions ||
      o.totalBytesOffloaded !== b.totalBytesOffloaded ||
      o.totalBytesFallback !== b.totalBytesFallback ||
      Math.abs(o.avgPeerCount - b.avgPeerCount) > 1e-9
    ) bad++;
  }
  return bad + Math.abs(base.length - summaries.length);
});

const oursMedian = median(oursTimes);
const baseMedian = median(baseTimes);
const result = {
  benchmark: 'rollup',
  reports,
  runs,
  duckdbThreads: config.duckdb.threads,
  pipeline: { seconds: oursTimes, medianSeconds: oursMedian, reportsPerSecond: reports / oursMedian },
  baseline: { seconds: baseTimes, medianSeconds: baseMedian, reportsPerSecond: reports / baseMedian },
  ratio: oursMedian / baseMedian,
  goal: 1.5,
  summaryMismatches: mismatches,
};
process.stdout.write(
  [
    `rollup benchmark: ${reports.toLocaleString('en-US')} reports, ${runs} runs each, DuckDB threads ${config.duckdb.threads}`,
    `  pipeline (cli pipeline)   median ${oursMedian.toFixed(2)} s   ${Math.round(reports / oursMedian).toLocaleString('en-US')} reports/s`,
    `  baseline (bare DuckDB)    median ${baseMedian.toFixed(2)} s   ${Math.round(reports / baseMedian).toLocaleString('en-US')} reports/s`,
    `  ${describeRatio('pipeline / baseline time', result.ratio, 1.5)}`,
    `  summaries that differ from the baseline's: ${mismatches}`,
  ].join('\n') + '\n',
);
await writeResult('rollup', result);
await deps.close();
if (mismatches > 0) process.exitCode = 1;
