// npm run bench:deploy-trace -- [--dir DIR] [--days 6] [--customers 10] [--streams 10] [--new 1000] [--busy N] [--ticks 6] [--rebuild-every 0] [--steady-only]
// Where the runs after a deployment that changes a state's SQL spend their time (issue 49, part 2):
// one warehouse (`--days` of history × `--customers` × `--streams`, and today up to now), then
// `--ticks` live runs before the deployment (steady), then the same count after it
// (P2PTEL_TEST_STATE_CODE_SALT changed in-process, the runs with `rebuildStale: false` as
// `start`'s lane makes them; with `--rebuild-every N`, N stale partitions rebuilt between two runs
// as the lane does), then the same count once no state is stale. Each run: `--new` new reports
// per customer in one file each, then `pipeline` at now, timed by step, and (P2PTEL_SQL_TRACE=1)
// every statement's time summed by its opening text.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { openJobDeps, type JobDeps } from '../jobs/deps.ts';
import { runPipeline, type PipelineProgress } from '../jobs/pipeline.ts';
import { runCompaction } from '../jobs/compaction/compact.ts';
import { rebuildStalePartitions, stalePartitions } from '../jobs/rollup/rebuild-stale.ts';
import { generateReports } from '../warehouse/sample/index.ts';
import { quotedString } from '../warehouse/duckdb/index.ts';

const opts = new Command()
  .option('--dir <dir>', 'scratch folder', '/tmp/deploy-trace')
  .option('--days <n>', 'days of history before today', '6')
  .option('--customers <n>', 'customers', '10')
  .option('--streams <n>', 'streams per customer', '10')
  .option('--new <n>', 'new reports per customer before each run', '1000')
  .option('--busy <n>', 'customers that get new reports (the first N; default all)')
  .option('--steady-only', 'stop after the steady runs (a live run traced, no deployment)')
  .option('--ticks <n>', 'runs per phase', '6')
  .option('--rebuild-every <n>', 'stale partitions rebuilt between two runs after the deployment', '0')
  .option('--top <n>', 'statements shown per phase', '25')
  .parse()
  .opts<{ dir: string; days: string; customers: string; streams: string; new: string; busy?: string; steadyOnly?: boolean; ticks: string; rebuildEvery: string; top: string }>();

const DAY = 86_400_000;
const root = path.resolve(opts.dir);
const today = new Date(Math.floor(Date.now() / DAY) * DAY);
const todayIso = today.toISOString().slice(0, 10);
const customers = Array.from({ length: Number(opts.customers) }, (_, i) => `c${i + 1}`);
const say = (s: string) => process.stderr.write(`${s}\n`);

async function open(dir: string): Promise<JobDeps & { close(): Promise<void> }> {
  return openJobDeps(loadConfig({ overrides: { WAREHOUSE_DIR: dir }, env: { P2PTEL_SQL_TRACE: '1' } }), silentLogger);
}

/** Statement times while `fn` runs, summed by the statement's opening text (digits folded). */
async function traced<T>(fn: () => Promise<T>): Promise<{ value: T; sql: Map<string, { ms: number; n: number }> }> {
  const sql = new Map<string, { ms: number; n: number }>();
  const orig = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const s = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    const m = /^sql (\d+) ms  (.*)$/s.exec(s);
    if (!m) return (orig as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
    const key = m[2]!.trim().replace(/'[^']*'/g, "'…'").replace(/\d+/g, 'N').slice(0, 110);
    const e = sql.get(key) ?? { ms: 0, n: 0 };
    e.ms += Number(m[1]);
    e.n += 1;
    sql.set(key, e);
    return true;
  }) as typeof process.stderr.write;
  try {
    return { value: await fn(), sql };
  } finally {
    process.stderr.write = orig;
  }
}

/** `--new` reports of each customer at now: copies of rows of its last history day under new ids. */
async function landNew(deps: JobDeps, round: string): Promise<void> {
  const now = Date.now();
  const yesterday = new Date(today.getTime() - DAY).toISOString().slice(0, 10);
  await deps.db.withSession(async (s) => {
    for (const c of customers.slice(0, opts.busy === undefined ? customers.length : Number(opts.busy))) {
      const from = quotedString(path.join(root, 'wh', 'raw', 'session_reports', `customer=${c}`, `date=${yesterday}`, '*.parquet'));
      const dir = path.join(root, 'wh', 'raw', 'session_reports', `customer=${c}`, `date=${todayIso}`);
      await fs.mkdir(dir, { recursive: true });
      await s.run(
        `COPY (SELECT * REPLACE ('tr-${now}-${round}-' || CAST(row_number() OVER () AS VARCHAR) AS reportId,
            make_timestamp(${now * 1000}::BIGINT - CAST(random() * 5000000 AS BIGINT)) AS ts)
          FROM read_parquet(${from}, hive_partitioning = false) USING SAMPLE ${Number(opts.new)} ROWS)
         TO ${quotedString(path.join(dir, `ingest-tr-${now}-${round}.parquet`))} (FORMAT parquet)`,
      );
    }
  });
}

interface Tick { ms: number; steps: Record<string, number>; sql: Map<string, { ms: number; n: number }>; stale: number; reports: number }

async function tick(deps: JobDeps, round: string, rebuildStale: boolean): Promise<Tick> {
  await landNew(deps, round);
  await runCompaction(deps);
  const started = performance.now();
  let last = started;
  const steps: Record<string, number> = {};
  const mark = (name: string) => {
    const t = performance.now();
    steps[name] = (steps[name] ?? 0) + (t - last);
    last = t;
  };
  const { value, sql } = await traced(() =>
    runPipeline(deps, { asOf: new Date(), compact: false, rebuildStale }, (p: PipelineProgress) => mark(p.step === 'planned' ? 'plan' : p.step === 'published' ? 'combine+publish' : 'builds')),
  );
  const ps = value.manifest.partitionStates;
  return { ms: performance.now() - started, steps, sql, stale: ps?.stale ?? 0, reports: value.manifest.rows.reports };
}

function summary(name: string, ticks: Tick[]): void {
  const sum = new Map<string, { ms: number; n: number }>();
  for (const t of ticks) for (const [k, v] of t.sql) {
    const e = sum.get(k) ?? { ms: 0, n: 0 };
    e.ms += v.ms;
    e.n += v.n;
    sum.set(k, e);
  }
  const total = ticks.reduce((a, t) => a + t.ms, 0);
  const sqlTotal = [...sum.values()].reduce((a, v) => a + v.ms, 0);
  say(`== ${name}: ${ticks.length} runs, mean ${(total / ticks.length).toFixed(0)} ms, SQL ${(sqlTotal / ticks.length).toFixed(0)} ms a run`);
  for (const k of Object.keys(ticks[0]!.steps)) say(`   step ${k}: ${(ticks.reduce((a, t) => a + (t.steps[k] ?? 0), 0) / ticks.length).toFixed(0)} ms`);
  for (const [k, v] of [...sum.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, Number(opts.top))) {
    say(`   ${(v.ms / ticks.length).toFixed(0).padStart(6)} ms ${(v.n / ticks.length).toFixed(1).padStart(6)}×  ${k}`);
  }
}

async function main(): Promise<void> {
  const base = path.join(root, 'base');
  const wh = path.join(root, 'wh');
  await fs.mkdir(root, { recursive: true });
  if (!(await fs.stat(path.join(base, 'state')).catch(() => null))) {
    const deps = await open(base);
    say(`generating ${opts.days} days × ${customers.length * Number(opts.streams)} streams ...`);
    await generateReports(deps.db, deps.layout, { customers, streams: Number(opts.streams), sessions: 1350, start: new Date(today.getTime() - Number(opts.days) * DAY), hours: Number(opts.days) * 24, seed: 11 });
    await runPipeline(deps, { asOf: new Date(today.getTime() - 1) });
    await deps.close();
  }
  await fs.rm(wh, { recursive: true, force: true });
  await fs.cp(base, wh, { recursive: true });
  const deps = await open(wh);
  const n = Number(opts.ticks);
  try {
    delete process.env['P2PTEL_TEST_STATE_CODE_SALT'];
    const warm: Tick[] = [];
    for (let i = 0; i < n; i++) warm.push(await tick(deps, `w${i}`, true));
    const steady: Tick[] = [];
    for (let i = 0; i < n; i++) {
      const t = await tick(deps, `s${i}`, true);
      steady.push(t);
      say(`steady ${i}: ${t.ms.toFixed(0)} ms ${JSON.stringify(Object.fromEntries(Object.entries(t.steps).map(([k, v]) => [k, Math.round(v)])))}`);
    }
    if (opts.steadyOnly) {
      summary('steady', steady);
      return;
    }
    process.env['P2PTEL_TEST_STATE_CODE_SALT'] = `trace-${Date.now()}`;
    const after: Tick[] = [];
    const every = Number(opts.rebuildEvery);
    for (let i = 0; i < n; i++) {
      const t = await tick(deps, `d${i}`, false);
      after.push(t);
      say(`deploy ${i}: ${t.ms.toFixed(0)} ms stale ${t.stale} ${JSON.stringify(Object.fromEntries(Object.entries(t.steps).map(([k, v]) => [k, Math.round(v)])))}`);
      if (every > 0) {
        const stale = await stalePartitions(deps, new Date());
        if (stale.length > 0) await rebuildStalePartitions(deps, stale.slice(0, every), new Date());
      }
    }
    const stale = await stalePartitions(deps, new Date());
    say(`rebuilding the ${stale.length} stale partitions left ...`);
    for (let i = 0; i < stale.length; i += 8) await rebuildStalePartitions(deps, stale.slice(i, i + 8), new Date());
    const rebuilt: Tick[] = [];
    for (let i = 0; i < n; i++) {
      const t = await tick(deps, `r${i}`, true);
      rebuilt.push(t);
      say(`rebuilt ${i}: ${t.ms.toFixed(0)} ms stale ${t.stale} ${JSON.stringify(Object.fromEntries(Object.entries(t.steps).map(([k, v]) => [k, Math.round(v)])))}`);
    }
    summary('steady', steady);
    summary('after the deployment', after);
    summary('after the deployment, without its first run', after.slice(1));
    summary('no state stale any more', rebuilt);
  } finally {
    await deps.close();
  }
}

await main();
