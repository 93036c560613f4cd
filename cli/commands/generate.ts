// `generate`: synthetic session reports into the landing area, or (--post) through a collector.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerGenerate(program: Command): void {
  withSettings(
    program
      .command('generate')
      .description('write realistic synthetic session reports as Parquet into the landing area')
      .option('--customers <ids>', 'comma-separated customer ids', 'acme,globex,initech')
      .option('--streams <n>', 'streams per customer', '3')
      .option('--sessions <n>', 'sessions per stream', '400')
      .option('--start <iso>', 'start of the period (default: --hours before now)')
      .option('--hours <h>', 'length of the period in hours', '6')
      .option('--seed <n>', 'random seed: the same seed and arguments give the same files', '1')
      .option('--post <url>', 'instead of writing files, post the reports through the collector at this URL (e.g. http://127.0.0.1:3001)')
      .option('--key <key>', 'with --post: the ingest key of the (one) customer given in --customers')
      .option('--batch <n>', 'with --post: reports per request', '500')
      .option('--connections <n>', 'with --post: requests in flight', '4'),
    'warehouse',
  ).action(commandAction(() => import('../actions/generate.ts')));
}
