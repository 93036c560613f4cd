// `start` (npm start): the main job end to end on embedded defaults — sample data when the
// warehouse is empty, one pipeline run, a summary table of the streams, a tenant and its token,
// and the API and a collector of SDK reports served until Ctrl-C.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withWarehouse } from '../options.ts';

export function registerStart(program: Command): void {
  withWarehouse(
    program
      .command('start')
      .description('sample data if the warehouse is empty, one pipeline run, a tenant and its token, the API and a collector')
      .option('--port <port>', 'API port (env PORT, default 3000)')
      .option('--host <host>', 'API interface (env HOST, default 127.0.0.1)')
      .option('--collector-port <port>', 'collector port (env COLLECTOR_PORT, default 3001)'),
  ).action(commandAction(() => import('../actions/start.ts')));
}
