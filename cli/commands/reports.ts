// `reports`: the nightly report run, inline (no Redis): pilot reports of the current snapshot
// pre-rendered as a static site per customer.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

const collect = (value: string, previous: string[]) => [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];

export function registerReports(program: Command): void {
  withSettings(
    program
      .command('reports')
      .description("pre-render the pilot reports of the current snapshot (json, md, html and an index page per customer), inline (no Redis)")
      .option('--customer <id>', 'only this customer (repeat, or separate ids with commas; default: every customer with data)', collect, [])
      .option('--force', 'render again even when the folder already holds these reports for the same inputs'),
    'warehouse',
  ).action(commandAction(() => import('../actions/reports.ts')));
}
