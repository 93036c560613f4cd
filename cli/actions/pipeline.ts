// The `pipeline` command's work: one inline rollup run, and what it did.
import { z } from 'zod';
import { progressBar, runtime, withJobDeps } from '../runtime.ts';
import { isoDate } from '../options.ts';
import { runPipeline, type PipelineResult } from '../../jobs/pipeline.ts';
import { bytes, duration, int } from '../format.ts';

export const Flags = z.object({ warehouse: z.string().optional(), asOf: isoDate.optional() });

export async function run(flags: z.output<typeof Flags>): Promise<void> {
  const rt = runtime(flags);
  const asOf = flags.asOf ?? new Date();
  const bar = progressBar('pipeline');
  const result = await withJobDeps(rt, (deps) =>
    runPipeline(deps, { asOf }, (p) => bar.update((100 * p.done) / p.total, p.step)),
  ).finally(() => bar.stop());
  process.stdout.write(`${describeRun(result)}\n`);
}

export function describeRun(r: PipelineResult): string {
  const m = r.manifest;
  const lines = [
    `snapshot ${m.snapshot} ${r.published ? 'published' : 'written but not published (a later asOf is current)'}`,
    `  asOf                ${m.asOf}`,
    `  files read          ${int(m.inputs.files)} (${bytes(m.inputs.bytes)})`,
    `  reports read        ${int(m.rows.reportsRead)}`,
    `  duplicates dropped  ${int(m.rows.duplicatesDropped)}`,
    `  after asOf          ${int(m.rows.afterAsOf)} (left for a later snapshot)`,
    `  reports counted     ${int(m.rows.reports)}`,
    `  files quarantined   ${int(m.quarantined.length)}`,
    ...m.quarantined.map((q) => `    ${q.relPath}: ${q.reason} (${q.detail})`),
    `  streams             ${int(m.rows.streams)}`,
    `  time taken          ${duration(m.durationMs)}`,
  ];
  if (r.pruned.length > 0) lines.push(`  old snapshots removed: ${r.pruned.length}`);
  return lines.join('\n');
}
