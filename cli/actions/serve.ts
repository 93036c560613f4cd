// The `serve` command's work: start the API, with the portal's pages beside it, and stop it
// cleanly on SIGINT or SIGTERM.
import { noFlags } from '../options.ts';
import { closeOnSignals, commandConfig } from '../runtime.ts';
import type { SettingOverrides } from '../../lib/config.ts';
import { createLogger, type Logger } from '../../lib/log.ts';
// The API itself (Koa, DuckDB, Arrow, templates) is loaded by run(), after the flags are checked.
import type { RunningApi } from '../../api/server.ts';
import type { ApiPages } from '../../api/app.ts';

/** Its flags are all settings' (PORT, HOST, METRICS_PORT). */
export const Flags = noFlags;

/** Stop the API on SIGINT/SIGTERM, once. */
export function stopApiOnSignals(api: RunningApi<ApiPages | null>, log: Logger): Promise<void> {
  return closeOnSignals(api, log, 'shutting down');
}

export async function run(_flags: unknown, settings: SettingOverrides): Promise<void> {
  const config = commandConfig(settings, 'service');
  const log = createLogger(config.logLevel, 'p2ptel-api', 'buffered');
  const [{ startApi }, { createPortal }] = await Promise.all([import('../../api/server.ts'), import('../../portal/portal.ts')]);
  // The API with the portal's pages beside it (docs/portal.md).
  const api = await startApi(config, log, { pages: createPortal });
  process.stderr.write(`API listening on ${api.url} (warehouse ${config.warehouseDir})${api.metricsUrl ? `; metrics on ${api.metricsUrl}` : ''}\n`);
  await stopApiOnSignals(api, log);
}
