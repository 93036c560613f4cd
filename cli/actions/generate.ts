// The `generate` command's work: synthetic session reports into the landing area.
import fs from 'node:fs/promises';
import { z } from 'zod';
import { parseOption, progressBar, runtime, withJobDeps } from '../runtime.ts';
import { isoDate, positiveInt, positiveNumber, nonNegativeInt } from '../options.ts';
import { generateReports, type GenerateResult } from '../../warehouse/sample/generate.ts';
import { bytes, duration, int } from '../format.ts';
import type { GenerateFlags } from '../commands/generate.ts';

export const DEFAULT_CUSTOMERS = ['acme', 'globex', 'initech'];

export async function runGenerate(flags: GenerateFlags): Promise<void> {
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
