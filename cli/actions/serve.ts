// The `serve` command's work: start the API and stop it cleanly on SIGINT or SIGTERM.
import { z } from 'zod';
import { port } from '../options.ts';
import { closeOnSignals } from '../runtime.ts';
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
    overrides: { WAREHOUSE_DIR: flags.warehouse, PORT: flags.port, HOST: flags.host, METRICS_PORT: flags.metricsPort },
    defaults: { LOG_LEVEL: defaultLogLevel },
  });
}

/** Stop the API on SIGINT/SIGTERM, once. */
export function stopApiOnSignals(api: RunningApi, log: Logger): Promise<void> {
  return closeOnSignals(api, log, 'shutting down');
}

export async function run(flags: ServeFlags): Promise<void> {
  const config = serveConfig(flags);
  const log = createLogger(config.logLevel, 'p2ptel-api', 'buffered');
  const { startApi } = await import('../../api/server.ts');
  const api = await startApi(config, log);
  process.stderr.write(`API listening on ${api.url} (warehouse ${config.warehouseDir})${api.metricsUrl ? `; metrics on ${api.metricsUrl}` : ''}\n`);
  await stopApiOnSignals(api, log);
}
