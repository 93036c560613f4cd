// The `pipeline` command's work: one inline rollup run, and what it did.
import { z } from 'zod';
import { runtime, withJobDeps } from '../runtime.ts';
import { progressBar } from '../progress.ts';
import { isoDate } from '../options.ts';
// The pipeline (DuckDB and the warehouse) is loaded by run(), after the flags are checked.
import type { PipelineResult } from '../../jobs/pipeline.ts';
import { bytes, duration, int } from '../format.ts';
import { assertAsOfNotAhead, describeAhead } from '../../lib/time.ts';
import { EXIT, ExitError } from '../../lib/errors.ts';
import { readCurrent } from '../../warehouse/snapshots/index.ts';
import type { SettingOverrides } from '../../lib/config.ts';

export const Flags = z.object({
  asOf: isoDate.optional(),
  rebuild: z.boolean().optional(),
  replaceCurrent: z.boolean().optional(),
  compact: z.boolean().optional(),
});

export async function run(flags: z.output<typeof Flags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const asOf = flags.asOf ?? new Date();
  // Refused before anything is opened or written (runPipeline checks again, for other callers).
  assertAsOfNotAhead(asOf, rt.config.snapshots.asOfMaxSkewMs);
  const bar = progressBar('pipeline');
  const { result, current } = await withJobDeps(rt, async (deps) => {
    const { runPipeline } = await import('../../jobs/pipeline.ts');
    const r = await runPipeline(deps, { asOf, rebuild: flags.rebuild === true, replaceCurrent: flags.replaceCurrent === true, compact: flags.compact !== false }, (p) => bar.update((100 * p.done) / p.total, p.step));
    return { result: r, current: r.published ? null : await readCurrent(deps.layout).catch(() => null) };
  }).finally(() => bar.stop());
  process.stdout.write(`${describeRun(result)}\n`);
  if (result.published) return;
  const currentAsOf = current ? Date.parse(current.asOf) : NaN;
  const ahead = currentAsOf - Date.now();
  if (ahead > rt.config.snapshots.asOfMaxSkewMs) {
    // Every scheduled run is discarded until then: that must not look like success.
    throw new ExitError(
      `snapshot ${result.manifest.snapshot} was not published: the current snapshot ${current!.snapshot} has asOf ` +
        `${current!.asOf}, ${describeAhead(ahead)} ahead of the clock, and every later run will be discarded until then. ` +
        `Go back with \`p2ptel snapshots use <id>\` (\`p2ptel snapshots list\` shows them) or \`p2ptel pipeline --replace-current\``,
      EXIT.blockedByFutureSnapshot,
    );
  }
  process.stderr.write(`warning: snapshot ${result.manifest.snapshot} was not published: a snapshot with a later asOf (${current?.asOf ?? 'unknown'}) is current\n`);
}

/** "partitions         12 rebuilt, 288 reused" and one line per reason. */
export function describePartitionStates(ps: PipelineResult['manifest']['partitionStates']): string[] {
  if (!ps) return [];
  return [
    `  partitions          ${int(ps.rebuilt)} rebuilt, ${int(ps.reused)} reused (unchanged files)`,
    ...Object.entries(ps.reasons)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([reason, n]) => `    ${int(n)} × ${reason}`),
    ...(ps.stale
      ? [`  rebuild under way   ${int(ps.stale)} stale states still used (a deployment changed their SQL; rebuilt a few a run; ROLLUP_REBUILD_BUDGET=0 rebuilds the rest before publishing)`]
      : []),
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
    ...(m.combine
      ? [
          `  series days         ${int(m.combine.seriesDaysLinked)} linked from states, ${int(m.combine.seriesDaysComputed)} computed up to asOf`,
          `  edge reports read   ${int(m.combine.rawReportsRead)} (hours cut by a window edge, reports after asOf)`,
        ]
      : []),
    ...describeCompactionLine(r.compaction),
    `  time taken          ${duration(m.durationMs)}`,
  ];
  if (r.pruned.length > 0) lines.push(`  old snapshots removed: ${r.pruned.length}`);
  return lines.join('\n');
}

/** "compaction  3 partitions, 120 files merged into 3; 40 covered files removed", when it did something. */
function describeCompactionLine(c: PipelineResult['compaction']): string[] {
  if (c === null || (c.compacted.length === 0 && c.merged.length === 0 && c.retired.files === 0 && c.failed === 0)) return [];
  const files = c.compacted.reduce((a, p) => a + p.files, 0);
  const failed = c.failed > 0 ? ` (${int(c.failed)} failed, see the log)` : '';
  const layers = c.merged.length > 0 ? `; ${int(c.merged.reduce((a, m) => a + m.layers, 0))} layers of ${int(c.merged.length)} states merged` : '';
  return [`  compaction          ${int(c.compacted.length)} partitions, ${int(files)} files merged into ${int(c.compacted.length)}${failed}; ${int(c.retired.files)} covered files removed${layers}`];
}
