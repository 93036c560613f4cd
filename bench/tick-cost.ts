// npm run bench:tick -- [--dir DIR] [--history-days 30] [--customers 10] [--streams 10] [--day-reports 2000000] [--day-files 17000] [--ticks 48] [--new 10000] [--rounds 3] [--reuse]
// What a rollup tick costs when today's partition already holds a day of 5-second flushes,
// against the same tick when it holds one file (issue 30, item 4: goal ≤ 1.5×), step by step.
// Two warehouses share the same history (`--history-days` of `--customers` × `--streams`, ending at
// today's midnight). In the "full day" one, customer c1's today holds `--day-reports` reports in
// `--day-files` files sorted by time (about a 5-second flush each), landed over `--ticks` inline
// runs as a live day lands them (compaction included, as `pipeline` does); in the "empty day" one,
// today holds one small file. Then, `--rounds` times in each, alternately: `--new` new reports
// (1 % of them up to 2 minutes ahead of the clock) land in one file, and one `pipeline` run (the
// tick) is timed, with its steps (plan, partition builds, combine and publication), and the
// compaction that precedes it (inline in `pipeline`, a job of its own on the worker tier) as a
// step of its own, outside the tick's total. `--reuse` times more rounds on the two warehouses an
// earlier run left in `--dir` (their days as that run landed them, and the rounds since), to
// compare builds of the code without landing the day again.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { openJobDeps, type JobDeps } from '../jobs/deps.ts';
import { runPipeline, type PipelineProgress } from '../jobs/pipeline.ts';
import { runCompaction } from '../jobs/compaction/compact.ts';
import { generateReports } from '../warehouse/sample/index.ts';
import { readStates } from '../warehouse/states/index.ts';
import { quotedString } from '../warehouse/duckdb/index.ts';
import { PROJECT_ROOT } from '../lib/version.ts';
import { median, writeResult } from './report.ts';

const opts = new Command()
  .option('--dir <dir>', 'scratch folder', path.join(PROJECT_ROOT, 'bench', 'output', 'tick-cost'))
  .option('--history-days <n>', 'days of history before today', '30')
  .option('--customers <n>', 'customers', '10')
  .option('--streams <n>', 'streams per customer', '10')
  .option('--day-reports <n>', "reports in c1's today (full day)", '2000000')
  .option('--day-files <n>', "files of c1's today (full day)", '17000')
  .option('--ticks <n>', 'inline runs that land the full day', '48')
  .option('--new <n>', 'new reports before each timed tick', '10000')
  .option('--rounds <n>', 'timed ticks per warehouse', '3')
  .option('--reuse', 'time rounds on the warehouses an earlier run left in --dir, without landing the day again')
  .parse()
  .opts<{ dir: string; historyDays: string; customers: string; streams: string; dayReports: string; dayFiles: string; ticks: string; new: string; rounds: string; reuse?: boolean }>();

const DAY = 86_400_000;
const root = path.resolve(opts.dir);
const today = new Date(Math.floor(Date.now() / DAY) * DAY);
const todayDir = (wh: string) => path.join(wh, 'raw', 'session_reports', 'customer=c1', `date=${today.toISOString().slice(0, 10)}`);
const say = (s: string) => process.stderr.write(`${s}\n`);

async function open(dir: string): Promise<JobDeps & { close(): Promise<void> }> {
  // The environment is left out (a bench's settings are its own), but for the SQL trace (P2PTEL_SQL_TRACE=1: each statement's time on stderr).
  return openJobDeps(loadConfig({ overrides: { WAREHOUSE_DIR: dir }, env: { P2PTEL_SQL_TRACE: process.env.P2PTEL_SQL_TRACE } }), silentLogger);
}

/** History of every customer up to today's midnight, built once into `base`. */
async function history(base: string): Promise<void> {
  if (await fs.stat(path.join(base, 'state')).catch(() => null)) return;
  const deps = await open(base);
  try {
    const customers = Array.from({ length: Number(opts.customers) }, (_, i) => `c${i + 1}`);
    const days = Number(opts.historyDays);
    say(`generating ${days} days × ${customers.length * Number(opts.streams)} streams ...`);
    await generateReports(deps.db, deps.layout, { customers, streams: Number(opts.streams), sessions: 1350, start: new Date(today.getTime() - days * DAY), hours: days * 24, seed: 11 });
    say('building the states of the history ...');
    await runPipeline(deps, { asOf: new Date(today.getTime() - 1) });
  } finally {
    await deps.close();
  }
}

/**
 * c1's today as `--day-files` files sorted by ts, written into `into` (not yet landed): generated,
 * then split by row number into files of equal size, as 5-second flushes would be.
 */
async function dayFiles(deps: JobDeps, into: string): Promise<string[]> {
  const pool = path.join(root, 'day-pool');
  await fs.rm(pool, { recursive: true, force: true });
  const poolDeps = await open(pool);
  const hours = Math.max(1, (Date.now() - today.getTime()) / 3_600_000 - 0.05);
  const perStream = Number(opts.dayReports) / Number(opts.streams);
  // A session reports about every 30 s for about 15 minutes in the generator: ~30 reports each.
  await generateReports(poolDeps.db, poolDeps.layout, { customers: ['c1'], streams: Number(opts.streams), sessions: Math.max(1, Math.round(perStream / 30)), start: today, hours, seed: 97 });
  await poolDeps.close();
  const files = Number(opts.dayFiles);
  await fs.mkdir(into, { recursive: true });
  await deps.db.withSession(async (s) => {
    const glob = quotedString(path.join(pool, 'raw', 'session_reports', 'customer=c1', '*', '*.parquet'));
    const n = (await s.one<{ n: number }>(`SELECT count(*) AS n FROM read_parquet(${glob}, hive_partitioning = false)`)).n;
    say(`splitting ${n} reports of today into ${files} files ...`);
    await s.run(
      `COPY (SELECT *, (row_number() OVER (ORDER BY ts) - 1) * ${files} // ${n} AS part FROM read_parquet(${glob}, hive_partitioning = false) WHERE CAST(ts AS DATE) = DATE '${today.toISOString().slice(0, 10)}')
       TO ${quotedString(path.join(root, 'split'))} (FORMAT parquet, PARTITION_BY (part), OVERWRITE_OR_IGNORE true)`,
    );
  });
  const out: string[] = [];
  for (const d of (await fs.readdir(path.join(root, 'split'))).sort((a, b) => Number(a.split('=')[1]) - Number(b.split('=')[1]))) {
    const k = Number(d.split('=')[1]);
    for (const f of await fs.readdir(path.join(root, 'split', d))) {
      const to = path.join(into, `ingest-bench-${String(k).padStart(6, '0')}-${f}`);
      await fs.rename(path.join(root, 'split', d, f), to);
      out.push(to);
    }
  }
  await fs.rm(path.join(root, 'split'), { recursive: true, force: true });
  await fs.rm(pool, { recursive: true, force: true });
  return out;
}

/** `--new` new reports of c1 in one file of its today: copies of today's rows under new ids, at now, 1 % up to 2 minutes ahead. */
async function landNew(deps: JobDeps, wh: string, round: number, sample: string): Promise<void> {
  const now = Date.now();
  await deps.db.withSession((s) =>
    s.run(
      `COPY (SELECT * REPLACE (
          'tick-${now}-${round}-' || CAST(row_number() OVER () AS VARCHAR) AS reportId,
          make_timestamp(${now * 1000}::BIGINT - CAST(random() * 5000000 AS BIGINT) + CASE WHEN random() < 0.01 THEN CAST(random() * 120000000 AS BIGINT) ELSE 0 END) AS ts)
        FROM read_parquet(${quotedString(sample)}, hive_partitioning = false) LIMIT ${Number(opts.new)})
       TO ${quotedString(path.join(todayDir(wh), `ingest-tick-${now}-${round}.parquet`))} (FORMAT parquet)`,
    ),
  );
}

/**
 * One tick: the compaction (a job of its own on the worker tier, inline before `pipeline`'s plan),
 * then a rollup run at now, timed step by step (ms since the previous step); totalMs is the
 * rollup's, compaction's is a step of its own.
 */
async function tick(deps: JobDeps): Promise<{ totalMs: number; steps: Record<string, number>; made: string }> {
  const compactStarted = performance.now();
  await runCompaction(deps);
  const compactionMs = performance.now() - compactStarted;
  const started = performance.now();
  let last = started;
  const steps: Record<string, number> = { 'compaction (own step)': compactionMs };
  const mark = (name: string) => {
    const t = performance.now();
    steps[name] = (steps[name] ?? 0) + (t - last);
    last = t;
  };
  await runPipeline(deps, { asOf: new Date(), compact: false }, (p: PipelineProgress) => mark(p.step === 'planned' ? 'plan' : p.step === 'published' ? 'combine + publish' : 'partition builds'));
  const states = await readStates(deps.layout);
  const m = states.get(`c1/${today.toISOString().slice(0, 10)}`)?.[0];
  return { totalMs: performance.now() - started, steps, made: `${m?.made ?? '?'}, ${m?.layers?.length ?? 0} layers, ${m?.files.length ?? 0} files` };
}

async function main(): Promise<void> {
  const base = path.join(root, 'base');
  const full = path.join(root, 'full');
  const empty = path.join(root, 'empty');
  const reuse = opts.reuse === true;
  if (reuse && !((await fs.stat(full).catch(() => null)) && (await fs.stat(empty).catch(() => null)))) {
    throw new Error(`--reuse: no warehouses of an earlier run in ${root} (run once without --reuse)`);
  }
  await fs.mkdir(root, { recursive: true });
  if (!reuse) {
    await history(base);
    for (const wh of [full, empty]) {
      await fs.rm(wh, { recursive: true, force: true });
      await fs.cp(base, wh, { recursive: true });
    }
  }
  const fullDeps = await open(full);
  const emptyDeps = await open(empty);
  try {
    const stagedDir = path.join(root, 'staged');
    let sample: string;
    if (reuse) {
      const staged = (await fs.readdir(stagedDir)).sort();
      sample = path.join(stagedDir, staged[Math.floor(staged.length / 2)]!);
    } else {
      // The full day, landed over --ticks runs as a live day would land it.
      const staged = await dayFiles(fullDeps, stagedDir);
      sample = staged[Math.floor(staged.length / 2)]!;
      await fs.mkdir(todayDir(full), { recursive: true });
      const ticks = Number(opts.ticks);
      for (let t = 0; t < ticks; t++) {
        const slice = staged.slice(Math.floor((t * staged.length) / ticks), Math.floor(((t + 1) * staged.length) / ticks));
        for (const f of slice) await fs.copyFile(f, path.join(todayDir(full), path.basename(f)));
        const r = await tick(fullDeps);
        say(`landing the day: tick ${t + 1}/${ticks}, ${slice.length} files, ${(r.totalMs / 1000).toFixed(1)} s (${r.made})`);
      }
      // The empty day: one small file.
      await fs.mkdir(todayDir(empty), { recursive: true });
      await fs.copyFile(staged[staged.length - 1]!, path.join(todayDir(empty), path.basename(staged[staged.length - 1]!)));
      await tick(emptyDeps);
    }
    const results: Record<'full' | 'empty', Awaited<ReturnType<typeof tick>>[]> = { full: [], empty: [] };
    for (let round = 0; round < Number(opts.rounds); round++) {
      for (const [name, deps, wh] of [['full', fullDeps, full], ['empty', emptyDeps, empty]] as const) {
        await landNew(deps, wh, round, sample);
        const r = await tick(deps);
        results[name].push(r);
        say(`round ${round + 1} ${name}: ${(r.totalMs / 1000).toFixed(2)} s ${JSON.stringify(Object.fromEntries(Object.entries(r.steps).map(([k, v]) => [k, Math.round(v)])))} (${r.made})`);
      }
    }
    const med = (name: 'full' | 'empty') => median(results[name].map((r) => r.totalMs));
    const stepMedians = (name: 'full' | 'empty') =>
      Object.fromEntries(Object.keys(results[name][0]!.steps).map((k) => [k, Math.round(median(results[name].map((r) => r.steps[k] ?? 0)))]));
    const ratio = med('full') / med('empty');
    const result = {
      historyDays: Number(opts.historyDays),
      streams: Number(opts.customers) * Number(opts.streams),
      dayReports: Number(opts.dayReports),
      dayFiles: Number(opts.dayFiles),
      newReports: Number(opts.new),
      tickMs: { full: Math.round(med('full')), empty: Math.round(med('empty')) },
      steps: { full: stepMedians('full'), empty: stepMedians('empty') },
      ratio: Number(ratio.toFixed(2)),
      goal: 1.5,
    };
    console.log(`tick after ${opts.new} new reports: full day ${(med('full') / 1000).toFixed(2)} s, empty day ${(med('empty') / 1000).toFixed(2)} s, ratio ${ratio.toFixed(2)}× (goal ≤ 1.5×)`);
    console.log(`steps (median ms): full ${JSON.stringify(result.steps.full)}; empty ${JSON.stringify(result.steps.empty)}`);
    console.log(`result: ${await writeResult('tick-cost', result)}`);
  } finally {
    await fullDeps.close();
    await emptyDeps.close();
  }
}

await main();
