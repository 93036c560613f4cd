// `generate`: synthetic session reports into the landing area.
import type { Command } from 'commander';
import { z } from 'zod';
import { action, parseOption, progressBar, runtime, withJobDeps } from '../runtime.ts';
import { isoDate, positiveInt, positiveNumber, nonNegativeInt, withWarehouse } from '../options.ts';
import { generateReports, type GenerateResult } from '../../warehouse/sample/generate.ts';
import { bytes, duration, int } from '../format.ts';
import fs from 'node:fs/promises';

export const DEFAULT_CUSTOMERS = ['acme', 'globex', 'initech'];

interface GenerateFlags {
  warehouse?: string;
  customers: string;
  streams: string;
  sessions: string;
  start?: string;
  hours: string;
  seed: string;
}

export function registerGenerate(program: Command): void {
  withWarehouse(
    program
      .command('generate')
      .description('write realistic synthetic session reports as Parquet into the landing area')
      .option('--customers <ids>', 'comma-separated customer ids', DEFAULT_CUSTOMERS.join(','))
      .option('--streams <n>', 'streams per customer', '3')
      .option('--sessions <n>', 'sessions per stream', '400')
      .option('--start <iso>', 'start of the period (default: --hours before now)')
      .option('--hours <h>', 'length of the period in hours', '6')
      .option('--seed <n>', 'random seed: the same seed and arguments give the same files', '1'),
  ).action(
    action(async (flags: GenerateFlags) => {
      const rt = runtime(flags);
      const hours = parseOption('hours', positiveNumber, flags.hours);
      const start = flags.start === undefined
        ? new Date(Math.floor(Date.now() / 1000) * 1000 - Math.round(hours * 3_600_000))
        : parseOption('start', isoDate, flags.start);
      const options = {
        customers: parseOption('customers', z.string().min(1), flags.customers).split(',').map((c) => c.trim()),
        streams: parseOption('streams', positiveInt, flags.streams),
        sessions: parseOption('sessions', positiveInt, flags.sessions),
        start,
        hours,
        seed: parseOption('seed', nonNegativeInt, flags.seed),
      };
      const bar = progressBar('generate');
      const started = Date.now();
      const result = await withJobDeps(rt, (deps) =>
        generateReports(deps.db, deps.layout, options, (p, step) => bar.update(p, step)),
      ).finally(() => bar.stop());
      process.stdout.write(`${await describeGeneration(result, Date.now() - started)}\n`);
    }),
  );
}

export async function describeGeneration(r: GenerateResult, ms: number): Promise<string> {
  let size = 0;
  for (const f of r.files) size += (await fs.stat(f)).size;
  return [
    `generated ${int(r.reports)} reports (${int(r.duplicates)} delivered twice) for ${r.streams} streams`,
    `  period    ${r.from.toISOString()} → ${r.to.toISOString()}`,
    `  files     ${r.files.length} (${bytes(size)})`,
    `  time      ${duration(ms)} (${int(Math.round(r.reports / Math.max(ms / 1000, 0.001)))} reports/s)`,
  ].join('\n');
}
