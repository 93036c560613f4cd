// `pipeline`: one rollup run, inline (no Redis), that publishes a snapshot.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerPipeline(program: Command): void {
  withSettings(
    program
      .command('pipeline')
      .description('run the rollups once, inline (no Redis), and publish a snapshot')
      .option('--as-of <iso>', 'snapshot time: reports with ts up to it count (default: now)')
      .option('--rebuild', 'rebuild the state of every partition instead of reusing unchanged ones (same figures, full cost)')
      .option('--replace-current', 'publish even if the current snapshot has a later asOf (the way back from an asOf in the future)')
      .option('--no-compact', 'do not compact the partitions that hold many small files before the run (see `compact`)'),
    'warehouse',
  ).action(commandAction(() => import('../actions/pipeline.ts')));
}
