// The `runs` command's work: the latest rollup and report runs, as BullMQ keeps them: state,
// progress, duration, figures, and why a run failed; scheduler fire times that started no run
// (coalesced behind a run in flight, or missed); and compaction jobs (done, skipped or failed).
import { z } from 'zod';
import { runtime, withQueues } from '../runtime.ts';
import { positiveInt } from '../options.ts';
import type { RunInfo } from '../../jobs/queue/runs.ts';
import { duration, int, table } from '../format.ts';
import type { SettingOverrides } from '../../lib/config.ts';

export const Flags = z.object({
  limit: positiveInt,
  json: z.boolean().optional(),
});

export async function run(flags: z.output<typeof Flags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const { listRuns } = await import('../../jobs/queue/runs.ts');
  const runs = await withQueues(rt, (queues) => listRuns(queues, flags.limit));
  process.stdout.write(`${flags.json ? JSON.stringify(runs, null, 2) : describeRuns(runs, rt.config.redis.prefix)}\n`);
}

/** Fire times of a schedule that started no run of their own (or a compaction that found another running): no progress, no duration. */
const TICK_STATES: ReadonlySet<string> = new Set(['coalesced', 'missed', 'skipped']);

function progressCell(r: RunInfo): string {
  if (TICK_STATES.has(r.state)) return '-';
  return r.state === 'completed' || r.state === 'failed' ? r.progress : `${Math.round(r.percent)}% ${r.progress}`.trim();
}

export function describeRuns(runs: RunInfo[], prefix: string): string {
  if (runs.length === 0) return `no runs yet (queue prefix ${prefix})`;
  const dash = (v: number | null) => (v === null ? '-' : int(v));
  return table(
    ['kind', 'asOf', 'state', 'progress', 'duration', 'reports', 'streams', 'result', 'error'],
    runs.map((r) => [
      r.kind,
      r.asOf,
      r.state,
      progressCell(r),
      r.durationMs === null || TICK_STATES.has(r.state) ? '-' : duration(r.durationMs),
      dash(r.reports),
      dash(r.streams),
      r.snapshot ?? r.note ?? '-',
      r.error ?? '-',
    ]),
    new Set([4, 5, 6]),
  );
}
