// `start` (npm start): the main job end to end on embedded defaults — sample data when the
// warehouse is empty, one pipeline run, a summary table of the streams, a tenant and its token,
// and the API and a collector of SDK reports served until Ctrl-C.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerStart(program: Command): void {
  withSettings(
    program.command('start').description('sample data if the warehouse is empty, one pipeline run, a tenant and its token, the API and a collector'),
    'start',
    'warehouse',
  ).action(commandAction(() => import('../actions/start.ts')));
}
