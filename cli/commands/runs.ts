// `runs`: the latest rollup and report runs, as BullMQ keeps them: state, progress, duration,
// figures, and why a run failed.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerRuns(program: Command): void {
  withSettings(
    program
      .command('runs')
      .description('list the latest runs: asOf, state, progress, duration, reports, streams, error')
      .option('--limit <n>', 'how many runs', '20')
      .option('--json', 'one JSON array instead of a table'),
    'warehouse',
    'redis',
  ).action(commandAction(() => import('../actions/runs.ts')));
}
