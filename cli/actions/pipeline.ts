// The `pipeline` command's work: one inline rollup run, and what it did.
import { parseOption, progressBar, runtime, withJobDeps } from '../runtime.ts';
import { isoDate } from '../options.ts';
import { runPipeline, type PipelineResult } from '../../jobs/pipeline.ts';
import { bytes, duration, int } from '../format.ts';

export async function runPipelineCommand(flags: { warehouse?: string; asOf?: string; rebuild?: boolean }): Promise<void> {
  const rt = runtime(flags);
  const asOf = flags.asOf === undefined ? new Date() : parseOption('as-of', isoDate, flags.asOf);
  const bar = progressBar('pipeline');
  const result = await withJobDeps(rt, (deps) =>
    runPipeline(deps, { asOf, rebuild: flags.rebuild === true }, (p) => bar.update((100 * p.done) / p.total, p.step)),
  ).finally(() => bar.stop());
  process.stdout.write(`${describeRun(result)}\n`);
}

/** "partitions         12 rebuilt, 288 reused" and one line per reason. */
export function describePartitionStates(ps: PipelineResult['manifest']['partitionStates']): string[] {
  if (!ps) return [];
  return [
    `  partitions          ${int(ps.rebuilt)} rebuilt, ${int(ps.reused)} reused (unchanged files)`,
    ...Object.entries(ps.reasons)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([reason, n]) => `    ${int(n)} × ${reason}`),
  ];
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
    ...describePartitionStates(m.partitionStates),
    `  time taken          ${duration(m.durationMs)}`,
  ];
  if (r.pruned.length > 0) lines.push(`  old snapshots removed: ${r.pruned.length}`);
  return lines.join('\n');
}
