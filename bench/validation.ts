// npm run bench:validation -- [--warehouse DIR] [--reports N] [--runs K]
// The cost of row validation (warehouse/landing/validate-rows.ts: every contract column, straight from
// the files, one aggregate scan grouped by file) against a bare scan of the same files reading
// the rollup's columns (the least any rollup must read), per customer partition as a run does,
// alternated so that machine noise hits both alike; and the share of a full pipeline run it takes.
import path from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { PROJECT_ROOT } from '../lib/version.ts';
import { openJobDeps } from '../jobs/deps.ts';
import { runPipeline } from '../jobs/pipeline.ts';
import { generateReports } from '../warehouse/sample/index.ts';
import { fileList } from '../warehouse/duckdb/index.ts';
import { checkSchema, discoverLanding, type LandedFile } from '../warehouse/landing/index.ts';
import { ROLLUP_COLUMNS } from '../warehouse/session-reports/index.ts';
import { validateRows } from '../warehouse/landing/index.ts';
import { median, writeResult } from './report.ts';

const opts = new Command()
  .option('--warehouse <dir>', 'an existing warehouse (default: generate one under bench/output/)')
  .option('--reports <n>', 'reports to generate when no warehouse is given (about)', '3000000')
  .option('--runs <k>', 'timed runs of each side', '3')
  .parse()
  .opts<{ warehouse?: string; reports: string; runs: string }>();
const runs = Number(opts.runs);

const CUSTOMERS = ['acme', 'globex', 'initech'];
const STREAMS = 10;
const HOURS = 30;
const start = new Date('2026-11-19T00:00:00Z');
const dir = opts.warehouse ?? path.join(PROJECT_ROOT, 'bench', 'output', `validation-${opts.reports}`);
const config = loadConfig({ overrides: { WAREHOUSE_DIR: dir } });
const deps = await openJobDeps(config, silentLogger);

let landed = (await discoverLanding(deps.layout)).files;
if (landed.length === 0) {
  const sessions = Math.max(1, Math.round(Number(opts.reports) / 44 / (CUSTOMERS.length * STREAMS)));
  process.stderr.write(`generating about ${Number(opts.reports).toLocaleString('en-US')} reports in ${dir} ...\n`);
  await generateReports(deps.db, deps.layout, { customers: CUSTOMERS, streams: STREAMS, sessions, start, hours: HOURS, seed: 2026 });
  landed = (await discoverLanding(deps.layout)).files;
}
const byCustomer = new Map<string, LandedFile[]>();
for (const f of landed) byCustomer.set(f.customerId, [...(byCustomer.get(f.customerId) ?? []), f]);
const schemas = new Map<string, ReadonlyMap<string, string>>();
await deps.db.withSession(async (s) => {
  for (const f of landed) {
    const v = await checkSchema(s, f.path);
    if (!v.ok) throw new Error(`${f.relPath}: ${v.detail}`);
    schemas.set(f.path, v.schema.columns);
  }
});

// Every rollup column read and aggregated per file, every aggregate fetched (an aggregate that is
// not fetched would be pruned by DuckDB's optimizer and not read at all).
const numeric = ['bytesOffloaded', 'bytesFallback', 'peerCount', 'bufferHealth', 'stallCount'];
const bareAggregates = [
  'count(*) AS n',
  ...numeric.map((c) => `sum("${c}") AS "${c}"`),
  'count(DISTINCT streamId) AS streams',
  'max(ts) AS ts',
  'count_if(final) AS finals',
  'max(length(reportId)) AS r',
  'max(length(sessionId)) AS s',
];
void ROLLUP_COLUMNS;
async function bareScan(): Promise<{ seconds: number; rows: number }> {
  const t = performance.now();
  let rows = 0;
  await deps.db.withSession(async (s) => {
    for (const files of byCustomer.values()) {
      const r = await s.all<{ n: number }>(
        `SELECT filename, ${bareAggregates.join(', ')} FROM read_parquet(${fileList(files.map((f) => f.path))}, union_by_name = true, filename = true) GROUP BY filename`,
      );
      rows += r.reduce((a, x) => a + x.n, 0);
    }
  });
  return { seconds: (performance.now() - t) / 1000, rows };
}

async function validation(): Promise<number> {
  const t = performance.now();
  await deps.db.withSession(async (s) => {
    for (const files of byCustomer.values()) {
      const bad = await validateRows(s, files.map((f) => ({ path: f.path, columns: schemas.get(f.path)! })));
      if (bad.size > 0) throw new Error(`unexpected bad files: ${[...bad.keys()].join(', ')}`);
    }
  });
  return (performance.now() - t) / 1000;
}

await bareScan();
await validation();
const bare: number[] = [];
const valid: number[] = [];
let rows = 0;
for (let i = 0; i < runs; i++) {
  const b = await bareScan();
  rows = b.rows;
  bare.push(b.seconds);
  valid.push(await validation());
  process.stderr.write(`run ${i + 1}/${runs}: bare scan ${b.seconds.toFixed(2)} s, validation ${valid.at(-1)!.toFixed(2)} s\n`);
}
const [latest] = await deps.db.withSession((s) => s.all<{ t: Date }>(`SELECT max(ts) AS t FROM read_parquet(${fileList(landed.map((f) => f.path))})`));
const asOf = latest!.t;
const t = performance.now();
await runPipeline(deps, { asOf });
const pipelineSeconds = (performance.now() - t) / 1000;

const result = {
  benchmark: 'validation',
  reports: rows,
  files: landed.length,
  runs,
  duckdbThreads: config.duckdb.threads,
  bareScan: { seconds: bare, medianSeconds: median(bare) },
  validation: { seconds: valid, medianSeconds: median(valid) },
  ratio: median(valid) / median(bare),
  pipelineSeconds,
  validationShareOfPipeline: median(valid) / pipelineSeconds,
};
process.stdout.write(
  [
    `validation benchmark: ${rows.toLocaleString('en-US')} reports in ${landed.length} files, ${runs} runs each, DuckDB threads ${config.duckdb.threads}`,
    `  bare scan of the rollup's columns   median ${median(bare).toFixed(2)} s`,
    `  validation of every column           median ${median(valid).toFixed(2)} s   (${result.ratio.toFixed(2)}× the bare scan)`,
    `  full pipeline run (once)             ${pipelineSeconds.toFixed(2)} s   (validation ${(100 * result.validationShareOfPipeline).toFixed(0)} % of it)`,
  ].join('\n') + '\n',
);
await writeResult('validation', result);
await deps.close();
