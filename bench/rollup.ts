// npm run bench:rollup -- [--reports N] [--runs K]
// Times a full rollup run (cli pipeline --rebuild: validation, partition states, snapshot, catalog) and, in the
// same process and alternating with it, a bare DuckDB script computing the same figures straight
// from the raw files (bench/baseline-rollup.sql). Prints reports/s of both and their ratio.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { TIMESTAMP } from '@duckdb/node-api';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { PROJECT_ROOT } from '../lib/version.ts';
import { openJobDeps } from '../jobs/deps.ts';
import { runPipeline } from '../jobs/pipeline.ts';
import { generateReports } from '../warehouse/sample/generate.ts';
import { timestampParam } from '../warehouse/duckdb/param-values.ts';
import { fillSql, quotedString } from '../warehouse/sql-files.ts';
import { discoverLanding } from '../warehouse/landing.ts';
import { currentSnapshot, readStreamSummaries, type StreamSummary } from '../warehouse/snapshot-read.ts';
import { describeRatio, median, writeResult } from './report.ts';

const opts = new Command()
  .option('--reports <n>', 'reports to generate (about)', '5000000')
  .option('--runs <k>', 'timed runs of each side', '3')
  .parse()
  .opts<{ reports: string; runs: string }>();
const targetReports = Number(opts.reports);
const runs = Number(opts.runs);

const CUSTOMERS = ['acme', 'globex', 'initech'];
const STREAMS = 10;
const HOURS = 30;
// A session of this generator sends about 44 reports over a 30-hour period.
const sessions = Math.max(1, Math.round(targetReports / 44 / (CUSTOMERS.length * STREAMS)));
const start = new Date('2026-11-19T00:00:00Z');
const asOf = new Date(start.getTime() + HOURS * 3_600_000);

const dir = path.join(PROJECT_ROOT, 'bench', 'output', `rollup-${sessions}`);
const config = loadConfig({ overrides: { WAREHOUSE_DIR: dir } });
const deps = await openJobDeps(config, silentLogger);

if ((await discoverLanding(deps.layout)).files.length === 0) {
  process.stderr.write(`generating about ${targetReports.toLocaleString('en-US')} reports in ${dir} ...\n`);
  const g = await generateReports(deps.db, deps.layout, { customers: CUSTOMERS, streams: STREAMS, sessions, start, hours: HOURS, seed: 2026 });
  process.stderr.write(`generated ${g.reports.toLocaleString('en-US')} reports\n`);
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
