// `serve`: the HTTP API over the published snapshot, until SIGINT or SIGTERM.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withWarehouse } from '../options.ts';

export function registerServe(program: Command): void {
  withWarehouse(
    program
      .command('serve')
      .description('serve the HTTP API over the published snapshot')
      .option('--port <port>', 'port (env PORT, default 3000; 0 picks a free one)')
      .option('--host <host>', 'interface (env HOST, default 127.0.0.1)')
      .option('--metrics-port <port>', 'also serve GET /metrics without a token on this port, on METRICS_HOST (default 127.0.0.1); without it only operator tokens read /metrics (env METRICS_PORT)'),
  ).action(commandAction(() => import('../actions/serve.ts')));
}
