// `worker`: one process of the worker tier. Run as many as you like, on any machine that reaches
// the Redis and the warehouse folder; each takes plans, customer partitions and publications.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerWorker(program: Command): void {
  withSettings(
    program.command('worker').description('run a worker: takes rollup, report and compaction jobs from Redis until SIGTERM (logs on stderr)'),
    'worker',
    'warehouse',
    'redis',
  ).action(commandAction(() => import('../actions/worker.ts')));
}
