// Synthetic session reports (cli generate): DuckDB computes them column-wise from hashes of the
// seed and writes Parquet straight into a scratch folder, then the files land by rename.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { LIST, VARCHAR, listValue } from '@duckdb/node-api';
import { z } from 'zod';
import type { Db } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { fillSql, quotedString, sqlFile } from '../duckdb/index.ts';
import { exists, fsyncDir, listFiles, moveFile } from '../../lib/fsx.ts';
import { compactIso } from '../../lib/time.ts';
import { hostScratchDir, type WarehouseLayout } from '../layout.ts';
import { CUSTOMER_ID_PATTERN } from '../ids.ts';
import { InternalError } from '../../lib/errors.ts';

export const GenerateOptionsSchema = z
  .object({
    customers: z
      .array(z.string().regex(CUSTOMER_ID_PATTERN, 'a customer id is 1–64 characters of a-z, 0-9, _ and -'))
      .min(1, 'at least one customer')
      .refine((list) => new Set(list).size === list.length, 'customer ids must be distinct'),
    streams: z.number().int().min(1).max(1000),
    sessions: z.number().int().min(1).max(1_000_000),
    start: z.date(),
    hours: z.number().positive().max(24 * 400),
    seed: z.number().int().min(0).max(2 ** 31 - 1),
  })
  .refine((o) => o.streams * o.sessions * o.customers.length <= 50_000_000, 'at most 50 million sessions in one run');

export type GenerateOptions = z.infer<typeof GenerateOptionsSchema>;

export interface GenerateResult {
  files: string[];
  reports: number;
  duplicates: number;
  streams: number;
  /** Sessions drawn; the few that would start after the period ends send nothing. */
  sessionsPlanned: number;
  from: Date;
  to: Date;
}

export class GenerateError extends InternalError {
  override name = 'GenerateError';
  override readonly errorCode = 'generate_refused';
}

/**
 * Write synthetic reports into the landing area. `onProgress` gets 0–100 while DuckDB works.
 * Files are named by seed and start, so running the same generation twice is refused rather than
 * landing the same reports twice.
 */
export async function generateReports(
  db: Db,
  layout: WarehouseLayout,
  options: GenerateOptions,
  onProgress: (percent: number, phase: string) => void = () => {},
): Promise<GenerateResult> {
  const opts = GenerateOptionsSchema.parse(options);
  const startMs = opts.start.getTime();
  const endMs = startMs + Math.round(opts.hours * 3_600_000);
  const run: Generation = {
    opts,
    startMs,
    endMs,
    stem: `gen-${opts.seed}-${compactIso(opts.start, 's')}`,
    scratch: path.join(hostScratchDir(layout), `generate-${process.pid}-${randomBytes(4).toString('hex')}`),
  };
  await fs.mkdir(run.scratch, { recursive: true });
  try {
    const { reports, duplicates } = await db.withSession((s) => writeGenerated(s, run, onProgress));
    onProgress(95, 'landing');
    const files = await landGenerated(layout, run.scratch);
    onProgress(100, 'done');
    return {
      files,
      reports: reports + duplicates,
      duplicates,
      streams: opts.customers.length * opts.streams,
      sessionsPlanned: opts.customers.length * opts.streams * opts.sessions,
      from: new Date(startMs),
      to: new Date(endMs),
    };
  } finally {
    await fs.rm(run.scratch, { recursive: true, force: true });
  }
}

/** One generation: its options, period, file name stem and scratch folder. */
interface Generation {
  opts: GenerateOptions;
  startMs: number;
  endMs: number;
  stem: string;
  scratch: string;
}

/** The reports and their retried copies, written as Parquet into the scratch folder. */
async function writeGenerated(s: DbSession, run: Generation, onProgress: (percent: number, phase: string) => void): Promise<{ reports: number; duplicates: number }> {
  await s.run(sqlFile('random_macros'));
  const mainDir = path.join(run.scratch, 'main');
  const reports = await s.runWithProgress(
    fillSql(`COPY ({{query}}) TO {{dir}} (FORMAT parquet, PARTITION_BY (customer, date), FILENAME_PATTERN {{pattern}})`, {
      query: sqlFile('generate_reports'),
      dir: quotedString(mainDir),
      pattern: quotedString(`${run.stem}-{i}`),
    }),
    {
      seed: BigInt(run.opts.seed),
      start_ms: BigInt(run.startMs),
      end_ms: BigInt(run.endMs),
      customers: listValue(run.opts.customers),
      streams: run.opts.streams,
      sessions: run.opts.sessions,
    },
    { customers: LIST(VARCHAR) },
    (p) => onProgress(p * 0.9, 'generating'),
  );
  const duplicates = reports === 0 ? 0 : await writeRetries(s, run, mainDir);
  return { reports, duplicates };
}

/**
 * About 1 % of reports are delivered twice: the SDK retried, and the copy landed in another file of
 * the same partition.
 */
function writeRetries(s: DbSession, run: Generation, mainDir: string): Promise<number> {
  return s.run(
    fillSql(
      `COPY (SELECT * FROM read_parquet({{glob}}, hive_partitioning = true) WHERE hash(reportId) % 100 = 0)
           TO {{dir}} (FORMAT parquet, PARTITION_BY (customer, date), FILENAME_PATTERN {{pattern}})`,
      {
        glob: quotedString(path.join(mainDir, '*', '*', '*.parquet')),
        dir: quotedString(path.join(run.scratch, 'retries')),
        pattern: quotedString(`${run.stem}-retry-{i}`),
      },
    ),
  );
}

/** Moves the written files into the landing area (refused whole when one is there already); their paths. */
async function landGenerated(layout: WarehouseLayout, scratch: string): Promise<string[]> {
  const written = await listFiles(scratch, '.parquet');
  const moves = written.map((file) => {
    const rel = path.relative(scratch, file).split(path.sep).slice(1); // drop main/ or retries/
    return { from: file, to: path.join(layout.rawReports, ...rel) };
  });
  for (const m of moves) {
    if (await exists(m.to)) {
      throw new GenerateError(`${path.relative(layout.root, m.to)} already exists: this seed and start were generated before (nothing written)`);
    }
  }
  // Land every file by rename; each is complete before it appears (docs/sdk-ingest.md).
  const dirs = new Set<string>();
  for (const m of moves) {
    await moveFile(m.from, m.to);
    dirs.add(path.dirname(m.to));
  }
  for (const d of dirs) await fsyncDir(d);
  return moves.map((m) => m.to);
}
