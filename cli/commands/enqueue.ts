// `enqueue rollup|reports`: add a run now (named by its asOf: adding it twice runs it once; a run
// that failed is started again), and with --wait follow it to its end and say how it ended.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerEnqueue(program: Command): void {
  const enqueue = program
    .command('enqueue')
    .description('add a rollup or report run now; with --wait, wait for it and exit non-zero if it failed')
    .argument('<kind>', 'rollup or reports')
    .option('--as-of <iso>', 'the run\'s asOf (default: now, to the second); the same asOf is the same run')
    .option('--wait', 'wait until the run has finished and print how it ended')
    .option('--timeout <s>', 'with --wait: give up (exit 1) after this many seconds');
  withSettings(enqueue, 'warehouse', 'redis').action(commandAction(() => import('../actions/enqueue.ts'), ['kind']));
}
