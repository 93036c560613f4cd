// npm run bench:compaction -- [--tmp DIR] [--files 2000] [--customers 1] [--streams 10] [--sessions 1350] [--runs 2]
// What compaction buys a from-scratch run: one day of reports landed as many small files (what a
// collector flushing every few seconds leaves), the same files compacted, and the same reports as
// the generator writes them (one file per partition, and its file of retried copies). Each is read
// by `--rebuild` runs (every partition state built from its files; the best of --runs is kept);
// prints their times and files read and the compaction's own time, and checks that the three
// runs counted the same reports (test/warehouse/compaction.test.ts checks every figure). Then
// the steady state of a live day: COMPACTION_MIN_FILES more small files land beside the compacted
// day, and a compaction by the thresholds (what `pipeline` runs before each run) is timed.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { openJobDeps, type JobDeps } from '../jobs/deps.ts';
import { runPipeline, type PipelineResult } from '../jobs/pipeline.ts';
import { runCompaction } from '../jobs/compaction/compact.ts';
import { discoverLanding } from '../warehouse/landing/index.ts';
import { generateReports } from '../warehouse/sample/index.ts';
import { quotedString } from '../warehouse/duckdb/index.ts';
import { listFiles } from '../lib/fsx.ts';
import { writeResult } from './report.ts';

const opts = new Command()
  .option('--tmp <dir>', 'where the three warehouses are made (and removed after)', os.tmpdir())
  .option('--files <n>', 'small files per partition', '2000')
  .option('--customers <n>', 'customers', '1')
  .option('--streams <n>', 'streams per customer', '10')
  .option('--sessions <n>', 'sessions per stream over the day', '1350')
  .option('--runs <n>', 'from-scratch runs of each warehouse (the best is kept)', '2')
  .parse()
  .opts<{ tmp: string; files: string; customers: string; streams: string; sessions: string; runs: string }>();

const start = new Date('2026-11-20T00:00:00Z');
const asOf = new Date('2026-11-21T00:00:00Z');
const dir = await fs.mkdtemp(path.join(path.resolve(opts.tmp), 'p2ptel-bench-compaction-'));

async function warehouse(name: string): Promise<JobDeps & { close(): Promise<void> }> {
  return openJobDeps(loadConfig({ overrides: { WAREHOUSE_DIR: path.join(dir, name) } }), silentLogger);
}

/** The best time of `runs` from-scratch runs, and the last run. */
async function fromScratch(deps: JobDeps): Promise<{ seconds: number; r: PipelineResult }> {
  let best = Infinity;
  let r: PipelineResult | undefined;
  for (let i = 0; i < Number(opts.runs); i++) {
    const t = performance.now();
    r = await runPipeline(deps, { asOf, rebuild: true, compact: false });
    best = Math.min(best, (performance.now() - t) / 1000);
  }
  return { seconds: best, r: r! };
}

/** The landed files of `from` cut into about `files` files per partition in `to`, named as a collector names them. */
async function landAsSmallFiles(from: JobDeps, to: JobDeps, files: number): Promise<void> {
  const scratch = path.join(dir, 'split');
  const landed = (await discoverLanding(from.layout)).files;
  for (const f of landed) {
    const n = Math.ceil(files / landed.filter((g) => g.customerId === f.customerId && g.date === f.date).length);
    await fs.rm(scratch, { recursive: true, force: true });
    await from.db.withSession((s) =>
      s.run(
        `COPY (SELECT * EXCLUDE (file_row_number), file_row_number % ${n} AS part FROM read_parquet(${quotedString(f.path)}, file_row_number = true))
         TO ${quotedString(scratch)} (FORMAT parquet, PARTITION_BY (part))`,
      ),
    );
    const target = path.join(to.layout.rawReports, path.dirname(f.relPath));
    await fs.mkdir(target, { recursive: true });
    for (const [i, piece] of (await listFiles(scratch, '.parquet')).entries()) {
      await fs.rename(piece, path.join(target, `ingest-${path.basename(f.relPath, '.parquet')}-${i}-0.parquet`));
    }
  }
  await fs.rm(scratch, { recursive: true, force: true });
}

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

/** COMPACTION_MIN_FILES small files of `from` land again beside the compacted day of `to`; the compaction that follows, timed. */
async function steadyState(from: JobDeps, to: JobDeps): Promise<{ files: number; seconds: number }> {
  const files = (await discoverLanding(from.layout)).files.slice(0, to.config.compaction.minFiles);
  for (const f of files) await fs.copyFile(f.path, path.join(to.layout.rawReports, path.dirname(f.relPath), `late-${path.basename(f.path)}`));
  const t = performance.now();
  const r = await runCompaction(to);
  const seconds = (performance.now() - t) / 1000;
  const merged = r.compacted.reduce((a, x) => a + x.files, 0);
  process.stderr.write(`steady state: ${files.length} small files land beside the compacted day; a compaction by the thresholds merges ${merged} files in ${seconds.toFixed(2)} s\n`);
  return { files: merged, seconds };
}

const one = await warehouse('one-file');
const small = await warehouse('small-files');
const compacted = await warehouse('compacted');
try {
  const customers = Array.from({ length: Number(opts.customers) }, (_, i) => `c${i + 1}`);
  await generateReports(one.db, one.layout, { customers, streams: Number(opts.streams), sessions: Number(opts.sessions), start, hours: 24, seed: 7 });
  await landAsSmallFiles(one, small, Number(opts.files));
  await fs.cp(small.layout.rawReports, compacted.layout.rawReports, { recursive: true });
  const t = performance.now();
  const compaction = await runCompaction(compacted, { force: true });
  const compactionSeconds = (performance.now() - t) / 1000;

  const results: Record<string, { seconds: number; files: number; reports: number }> = {};
  const rows: string[] = [];
  for (const [name, deps] of [['one file', one], ['small files', small], ['compacted', compacted]] as const) {
    const { seconds, r } = await fromScratch(deps);
    results[name] = { seconds, files: r.manifest.inputs.files, reports: r.manifest.rows.reportsRead };
    rows.push(JSON.stringify(r.manifest.rows));
    process.stderr.write(`${name}: from scratch ${seconds.toFixed(2)} s, ${r.manifest.inputs.files} files (${mb(r.manifest.inputs.bytes)}), ${r.manifest.rows.reportsRead.toLocaleString('en-US')} reports\n`);
  }
  const c = compaction.compacted;
  process.stderr.write(
    `compaction of ${c.reduce((a, x) => a + x.files, 0)} files (${mb(c.reduce((a, x) => a + x.bytesIn, 0))}) into ${c.length} (${mb(c.reduce((a, x) => a + x.bytesOut, 0))}): ${compactionSeconds.toFixed(2)} s\n`,
  );
  if (new Set(rows).size !== 1) throw new Error('the three snapshots differ');
  const steady = await steadyState(small, compacted);
  process.stderr.write(`result: ${await writeResult('compaction', { opts, compactionSeconds, results, steady })}\n`);
} finally {
  await one.close();
  await small.close();
  await compacted.close();
  await fs.rm(dir, { recursive: true, force: true });
}
