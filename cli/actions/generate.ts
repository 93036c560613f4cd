// The `generate` command's work: synthetic session reports into the landing area, or posted
// through a collector in realistic batches (--post), like SDKs would.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { runtime, withJobDeps } from '../runtime.ts';
import { progressBar } from '../progress.ts';
import { isoDate, positiveInt, positiveNumber, nonNegativeInt } from '../options.ts';
import { generateReports, type GenerateResult } from '../../warehouse/sample/index.ts';
import { bytes, duration, int } from '../format.ts';
import { UserError } from '../../lib/errors.ts';
import { hostScratchDir, warehouseLayout } from '../../warehouse/layout.ts';
import type { SettingOverrides } from '../../lib/config.ts';

const collectorUrl = z.string().refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), 'an http:// or https:// URL of a collector');

export const Flags = z.object({
  customers: z.string().min(1).transform((s) => s.split(',').map((c) => c.trim())),
  streams: positiveInt,
  sessions: positiveInt,
  start: isoDate.optional(),
  hours: positiveNumber,
  seed: nonNegativeInt,
  post: collectorUrl.optional(),
  key: z.string().optional(),
  batch: positiveInt.max(2000, 'at most 2000 (the collector limit)'),
  connections: positiveInt.max(256, 'at most 256'),
});
type GenerateFlags = z.output<typeof Flags>;

export const DEFAULT_CUSTOMERS = ['acme', 'globex', 'initech'];

export async function run(flags: GenerateFlags, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const hours = flags.hours;
  const start = flags.start ?? new Date(Math.floor(Date.now() / 1000) * 1000 - Math.round(hours * 3_600_000));
  const options = { customers: flags.customers, streams: flags.streams, sessions: flags.sessions, start, hours, seed: flags.seed };
  if (flags.post !== undefined) {
    await postGenerated(rt, flags, options);
    return;
  }
  if (flags.key !== undefined) throw new UserError('--key goes with --post');
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

/** Generate into a scratch folder, then post every report through the collector; nothing lands here. */
async function postGenerated(rt: ReturnType<typeof runtime>, flags: GenerateFlags, options: Parameters<typeof generateReports>[2]): Promise<void> {
  const url = flags.post!;
  if (flags.key === undefined) throw new UserError('--post needs --key, the ingest key of the customer in --customers');
  if (options.customers.length !== 1) throw new UserError('--post sends every report with one ingest key: give --customers with that key\'s customer only');
  const batchSize = flags.batch;
  const concurrency = flags.connections;
  const { replayReports } = await import('../../sdk/replay.ts');
  await withJobDeps(rt, async (deps) => {
    const scratch = path.join(hostScratchDir(deps.layout), `replay-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      const bar = progressBar('generate');
      const gen = await generateReports(deps.db, warehouseLayout(scratch), options, (p, step) => bar.update(p, step)).finally(() => bar.stop());
      const post = progressBar('post');
      const r = await replayReports(deps.db, gen.files, path.join(scratch, 'replay'), {
        url,
        key: flags.key!,
        batchSize,
        concurrency,
        onProgress: (sent) => post.update((100 * sent) / Math.max(gen.reports, 1), `${int(sent)} reports`),
      }).finally(() => post.stop());
      process.stdout.write(
        [
          `posted ${int(r.reports)} reports (${int(gen.duplicates)} twice, as retrying SDKs do) to ${url}`,
          `  accepted  ${int(r.accepted)}${r.rejected > 0 ? ` (${int(r.rejected)} rejected)` : ''}`,
          `  requests  ${int(r.requests)} of up to ${batchSize} reports, ${concurrency} in flight (${int(r.retries)} retries)`,
          `  time      ${duration(r.ms)} (${int(Math.round(r.reports / Math.max(r.ms / 1000, 0.001)))} reports/s)`,
          `  the collector lands them at its next flush; then run \`pipeline\``,
        ].join('\n') + '\n',
      );
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
  });
}
