// The `compact` command's work: the compaction job, run inline, and what it did.
import { z } from 'zod';
import { runtime, withJobDeps } from '../runtime.ts';
import { bytes, duration, int } from '../format.ts';
import { CUSTOMER_ID_PATTERN } from '../../warehouse/ids.ts';
import { EXIT, ExitError } from '../../lib/errors.ts';
import type { CompactionResult } from '../../jobs/compaction/compact.ts';
import type { SettingOverrides } from '../../lib/config.ts';

export const Flags = z.object({
  customer: z.string().regex(CUSTOMER_ID_PATTERN, 'a customer id: 1–64 characters of [a-z0-9_-]').optional(),
  date: z.iso.date('a UTC date, YYYY-MM-DD').optional(),
  force: z.boolean().optional(),
});

export async function run(flags: z.output<typeof Flags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const result = await withJobDeps(rt, async (deps) => {
    const { runCompaction } = await import('../../jobs/compaction/compact.ts');
    return runCompaction(deps, { customerId: flags.customer, date: flags.date, force: flags.force });
  });
  if (result.busy) throw new ExitError('another compaction is running in this warehouse: try again once it is done', EXIT.alreadyRunning);
  process.stdout.write(`${describeCompaction(result).join('\n')}\n`);
  if (result.failed > 0) throw new ExitError(`the compaction of ${int(result.failed)} partition(s) failed (see the log); their files stay as they are`, EXIT.failed);
}

/** What a compaction did, a line each: partitions compacted, files merged, layers merged, covered files removed. */
export function describeCompaction(r: CompactionResult): string[] {
  const files = r.compacted.reduce((a, c) => a + c.files, 0);
  const bytesIn = r.compacted.reduce((a, c) => a + c.bytesIn, 0);
  const bytesOut = r.compacted.reduce((a, c) => a + c.bytesOut, 0);
  return [
    `compacted ${int(r.compacted.length)} partitions: ${int(files)} files (${bytes(bytesIn)}) merged into ${int(r.compacted.length)} (${bytes(bytesOut)})`,
    ...r.compacted.map((c) => `  ${c.customerId} ${c.date}: ${int(c.files)} files, ${int(c.rows)} rows`),
    `layers merged: ${int(r.merged.length)} states (the large merges a run leaves to compaction, docs/warehouse-state.md "Merging layers")`,
    ...r.merged.map((m) => `  ${m.partition}: ${int(m.layers)} layers, ${int(m.reports)} reports, ${duration(m.ms)}`),
    `covered files removed: ${int(r.retired.files)} (the others are still read by a snapshot, or were covered less than SNAPSHOT_DEBRIS_GRACE_SECONDS ago)`,
    `time taken ${duration(r.durationMs)}`,
  ];
}
