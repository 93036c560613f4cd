// `compact`: merge the small landed files of partitions into larger ones, inline (no Redis).
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerCompact(program: Command): void {
  withSettings(
    program
      .command('compact')
      .description('merge the small landed files of each partition that holds many into one file, inline (no figure changes; `pipeline` does it before each run)')
      .option('--customer <id>', "only this customer's partitions")
      .option('--date <YYYY-MM-DD>', 'only the partitions of this UTC date')
      .option('--force', 'compact every partition of two files or more, all of its files, whatever their size and number'),
    'warehouse',
  ).action(commandAction(() => import('../actions/compact.ts')));
}
