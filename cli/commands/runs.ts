// `runs`: the latest rollup and report runs, as BullMQ keeps them: state, progress, duration,
// figures, and why a run failed.
import type { Command } from 'commander';
import { action, parseOption, runtime, withQueues } from '../runtime.ts';
import { positiveInt, withRedis, withWarehouse } from '../options.ts';
import type { RunInfo } from '../../jobs/queue/runs.ts';
import { duration, int, table } from '../format.ts';

interface RunsFlags {
  warehouse?: string;
  redis?: string;
  queuePrefix?: string;
  limit: string;
  json?: boolean;
}

export function registerRuns(program: Command): void {
  withRedis(
    withWarehouse(
      program
        .command('runs')
        .description('list the latest runs: asOf, state, progress, duration, reports, streams, error')
        .option('--limit <n>', 'how many runs', '20')
        .option('--json', 'one JSON array instead of a table'),
    ),
  ).action(
    action(async (flags: RunsFlags) => {
      const rt = runtime(flags);
      const limit = parseOption('limit', positiveInt, flags.limit);
      const { listRuns } = await import('../../jobs/queue/runs.ts');
      const runs = await withQueues(rt, (queues) => listRuns(queues, limit));
      process.stdout.write(`${flags.json ? JSON.stringify(runs, null, 2) : describeRuns(runs, rt.config.redis.prefix)}\n`);
    }),
  );
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
      r.state === 'completed' || r.state === 'failed' ? r.progress : `${Math.round(r.percent)}% ${r.progress}`.trim(),
      r.durationMs === null ? '-' : duration(r.durationMs),
      dash(r.reports),
      dash(r.streams),
      r.snapshot ?? r.note ?? '-',
      r.error ?? '-',
    ]),
    new Set([4, 5, 6]),
  );
}
