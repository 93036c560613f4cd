// `serve`: the HTTP API over the published snapshot, until SIGINT or SIGTERM.
import type { Command } from 'commander';
import { z } from 'zod';
import { action, parseOption } from '../runtime.ts';
import { withWarehouse } from '../options.ts';
import { loadConfig } from '../../lib/config.ts';
import { createLogger, type Logger } from '../../lib/log.ts';
import { startApi, type RunningApi } from '../../api/server.ts';

/** Stop the server on SIGINT/SIGTERM, once. */
export function closeOnSignals(api: RunningApi, log: Logger): Promise<void> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'shutting down');
      void api.close().then(resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}

export function registerServe(program: Command): void {
  withWarehouse(
    program
      .command('serve')
      .description('serve the HTTP API over the published snapshot')
      .option('--port <port>', 'port (env PORT, default 3000; 0 picks a free one)')
      .option('--host <host>', 'interface (env HOST, default 127.0.0.1)'),
  ).action(
    action(async (flags: { warehouse?: string; port?: string; host?: string }) => {
      const port = flags.port === undefined ? undefined : parseOption('port', z.coerce.number().int().min(0).max(65535), flags.port);
      const config = loadConfig({ warehouseDir: flags.warehouse, port, host: flags.host, defaultLogLevel: 'info' });
      const log = createLogger(config.logLevel, 'p2ptel-api');
      const api = await startApi(config, log);
      process.stderr.write(`API listening on ${api.url} (warehouse ${config.warehouseDir})\n`);
      await closeOnSignals(api, log);
    }),
  );
}
