// The `serve` command's work: start the API and stop it cleanly on SIGINT or SIGTERM.
import { z } from 'zod';
import { port } from '../options.ts';
import { loadConfig, type AppConfig } from '../../lib/config.ts';
import { createLogger, type Logger } from '../../lib/log.ts';
// The API itself (Koa, DuckDB, Arrow, templates) is loaded by run(), after the flags are checked.
import type { RunningApi } from '../../api/server.ts';

/** The flags of `serve` (and, with more, of `start`). */
export const Flags = z.object({
  warehouse: z.string().optional(),
  port: port.optional(),
  host: z.string().optional(),
  metricsPort: port.optional(),
});
export type ServeFlags = z.output<typeof Flags>;

/** Config of an API process: flags over env, logging at info unless LOG_LEVEL says otherwise. */
export function serveConfig(flags: ServeFlags, defaultLogLevel: 'info' | 'warn' = 'info'): AppConfig {
  return loadConfig({
    warehouseDir: flags.warehouse,
    port: flags.port,
    host: flags.host,
    metricsPort: flags.metricsPort,
    defaultLogLevel,
  });
}

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

export async function run(flags: ServeFlags): Promise<void> {
  const config = serveConfig(flags);
  const log = createLogger(config.logLevel, 'p2ptel-api', 'buffered');
  const { startApi } = await import('../../api/server.ts');
  const api = await startApi(config, log);
  process.stderr.write(`API listening on ${api.url} (warehouse ${config.warehouseDir})${api.metricsUrl ? `; metrics on ${api.metricsUrl}` : ''}\n`);
  await closeOnSignals(api, log);
}
