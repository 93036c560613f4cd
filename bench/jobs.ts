// npm run bench:jobs -- [--reports N] [--runs K] [--workers W]
// The same data set rolled up inline (`cli pipeline`, one process) and as a BullMQ flow over W
// worker processes on this machine (`cli enqueue rollup --wait`), alternating, in one run with its
// own redis-server. Prints both times, their ratio, and whether the orchestrated run meets its
// goal: at most the inline time × 1.1 + 1 s. Both sides must publish the same figures.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { PROJECT_ROOT } from '../lib/version.ts';
import { openJobDeps } from '../jobs/deps.ts';
import { generateReports } from '../warehouse/sample/index.ts';
import { discoverLanding } from '../warehouse/landing/index.ts';
import { fileList, quotedString } from '../warehouse/duckdb/index.ts';
import { readSnapshotManifest, type SnapshotManifest } from '../warehouse/snapshots/index.ts';
import { publishedDir, readHistory, snapshotFiles } from '../warehouse/snapshots/index.ts';
import { startRedisServer } from '../test/helpers/redis-server.ts';
import { describeRatio, median, writeResult } from './report.ts';

const opts = new Command()
  .option('--reports <n>', 'reports to generate (about)', '2000000')
  .option('--runs <k>', 'timed runs of each side', '3')
  .option('--workers <w>', 'worker processes of the orchestrated side', '2')
  .parse()
  .opts<{ reports: string; runs: string; workers: string }>();
const targetReports = Number(opts.reports);
const runs = Number(opts.runs);
const workerCount = Number(opts.workers);

const CUSTOMERS = ['acme', 'globex', 'initech', 'umbrella'];
const STREAMS = 8;
const HOURS = 30;
// A session of this generator sends about 44 reports over a 30-hour period.
const sessions = Math.max(1, Math.round(targetReports / 44 / (CUSTOMERS.length * STREAMS)));
const start = new Date('2026-11-19T00:00:00Z');
const end = new Date(start.getTime() + HOURS * 3_600_000);
const dir = path.join(PROJECT_ROOT, 'bench', 'output', `jobs-${sessions}`);

const cores = os.availableParallelism();
// The workers share this machine: split its cores and memory between them, as one would.
const workerThreads = Math.max(1, Math.floor(cores / workerCount));
const workerMemoryGiB = Math.max(1, Math.floor(os.totalmem() / 2 ** 30 / 2 / workerCount));

const config = loadConfig({ overrides: { WAREHOUSE_DIR: dir } });
const deps = await openJobDeps(config, silentLogger);
if ((await discoverLanding(deps.layout)).files.length === 0) {
  process.stderr.write(`generating about ${targetReports.toLocaleString('en-US')} reports in ${dir} ...\n`);
  const g = await generateReports(deps.db, deps.layout, { customers: CUSTOMERS, streams: STREAMS, sessions, start, hours: HOURS, seed: 2027 });
  process.stderr.write(`generated ${g.reports.toLocaleString('en-US')} reports\n`);
}

// Snapshots of an earlier benchmark run would be newer than this run's asOfs, which then would not
// be published: this warehouse is the benchmark's own, start it afresh (the landed files stay).
await fs.rm(deps.layout.snapshots, { recursive: true, force: true });
await fs.rm(deps.layout.catalog, { force: true });

const redis = await startRedisServer();
const baseEnv: NodeJS.ProcessEnv = { ...process.env, WAREHOUSE_DIR: dir, REDIS_URL: redis.url, QUEUE_PREFIX: 'bench', LOG_LEVEL: 'warn' };
const cliPath = path.join(PROJECT_ROOT, 'bin/p2ptel.js');

function runCli(args: string[], env: NodeJS.ProcessEnv = baseEnv): Promise<{ seconds: number; stdout: string }> {
  const t = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('exit', (code) => {
      if (code === 0) resolve({ seconds: (performance.now() - t) / 1000, stdout });
      else reject(new Error(`p2ptel ${args.join(' ')} exited ${code}: ${stdout}`));
    });
  });
}

const workerEnv = { ...baseEnv, LOG_LEVEL: 'info', DUCKDB_THREADS: String(workerThreads), DUCKDB_MEMORY_LIMIT: `${workerMemoryGiB}GiB` };
const workers = Array.from({ length: workerCount }, () =>
  spawn(process.execPath, [cliPath, 'worker'], { env: workerEnv, stdio: ['ignore', 'ignore', 'pipe'] }),
);
await Promise.all(
  workers.map(
    (w) =>
      new Promise<void>((resolve, reject) => {
        let err = '';
        w.stderr!.on('data', (d: Buffer) => {
          err += d.toString();
          if (err.includes('"msg":"worker ready"')) resolve();
        });
        w.on('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready: ${err.slice(-1000)}`)));
      }),
  ),
);

/** The latest published snapshot of asOf that `pick` accepts. */
async function manifestOf(asOf: Date, pick: (m: SnapshotManifest) => boolean): Promise<SnapshotManifest> {
  for (const s of (await readHistory(deps.layout)).reverse()) {
    const m = await readSnapshotManifest(snapshotFiles(publishedDir(deps.layout, s)).manifest);
    if (m.asOf === asOf.toISOString() && pick(m)) return m;
  }
  throw new Error(`no snapshot of ${asOf.toISOString()}`);
}

/** Row count and an order-independent hash of every stream summary and series row. */
async function fingerprint(m: SnapshotManifest): Promise<string> {
  const files = snapshotFiles(publishedDir(deps.layout, m.snapshot));
  const customers = m.partitions.map((p) => p.customerId);
  return deps.db.withSession(async (s) => {
    const one = async (list: string[]) => {
      const r = await s.one<{ n: number; h: string }>(`SELECT count(*) AS n, CAST(bit_xor(hash(t)) AS VARCHAR) AS h FROM read_parquet(${fileList(list)}) AS t`);
      return `${r.n}:${r.h}`;
    };
    const platform = await s.one<{ h: string }>(`SELECT CAST(bit_xor(hash(t)) AS VARCHAR) AS h FROM read_parquet(${quotedString(files.platform)}) AS t`);
    return `${await one(customers.map(files.summaries))}/${await one(customers.map(files.series))}/${platform.h}`;
  });
}

const inlineTimes: number[] = [];
const flowTimes: number[] = [];
const mismatches: string[] = [];
let reports = 0;
try {
  // Round 0 warms the file cache and the workers; it is not counted.
  for (let i = 0; i <= runs; i++) {
    const asOf = new Date(end.getTime() + i * 60_000);
    const inline = await runCli(['pipeline', '--as-of', asOf.toISOString()]);
    const flow = await runCli(['enqueue', 'rollup', '--as-of', asOf.toISOString(), '--wait']);
    // An inline run's id carries a nonce (<asOf>-<hex>); a flow's is its asOf alone.
    const a = await manifestOf(asOf, (m) => m.runId.includes('-'));
    const b = await manifestOf(asOf, (m) => !m.runId.includes('-'));
    reports = b.rows.reportsRead;
    if ((await fingerprint(a)) !== (await fingerprint(b)) || JSON.stringify(a.rows) !== JSON.stringify(b.rows)) {
      mismatches.push(asOf.toISOString());
    }
    if (i === 0) continue;
    inlineTimes.push(inline.seconds);
    flowTimes.push(flow.seconds);
    process.stderr.write(`run ${i}/${runs}: inline ${inline.seconds.toFixed(2)} s, flow over ${workerCount} workers ${flow.seconds.toFixed(2)} s\n`);
  }
} finally {
  await Promise.all(
    workers.map((w) => {
      const exited = new Promise((r) => w.once('exit', r));
      w.kill('SIGTERM');
      return exited;
    }),
  );
  await redis.stop();
  await deps.close();
}

const inlineMedian = median(inlineTimes);
const flowMedian = median(flowTimes);
const allowed = inlineMedian * 1.1 + 1;
const result = {
  benchmark: 'jobs',
  reports,
  customers: CUSTOMERS.length,
  runs,
  cores,
  inline: { duckdbThreads: config.duckdb.threads, seconds: inlineTimes, medianSeconds: inlineMedian },
  flow: { workers: workerCount, duckdbThreadsPerWorker: workerThreads, seconds: flowTimes, medianSeconds: flowMedian },
  ratio: flowMedian / inlineMedian,
  goal: 'flow <= inline * 1.1 + 1 s',
  goalMet: flowMedian <= allowed,
  figureMismatches: mismatches,
};
process.stdout.write(
  [
    `jobs benchmark: ${reports.toLocaleString('en-US')} reports, ${CUSTOMERS.length} customer partitions, ${runs} runs each, ${cores} cores`,
    `  inline  cli pipeline, 1 process × ${config.duckdb.threads} DuckDB threads            median ${inlineMedian.toFixed(2)} s`,
    `  flow    cli enqueue --wait, ${workerCount} workers × ${workerThreads} DuckDB threads each   median ${flowMedian.toFixed(2)} s`,
    `  ${describeRatio('flow / inline time', result.ratio, 1.1)}`,
    `  goal flow ≤ inline × 1.1 + 1 s = ${allowed.toFixed(2)} s: ${result.goalMet ? 'met' : 'NOT met'}`,
    `  runs whose figures differ between the two: ${mismatches.length}`,
  ].join('\n') + '\n',
);
await writeResult('jobs', result);
if (mismatches.length > 0) process.exitCode = 1;
