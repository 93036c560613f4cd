// `collect`: a collector of SDK session reports (POST /v1/session-reports), until SIGINT or SIGTERM,
// which land everything spooled before exiting. Run several, each with its own spool folder.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withWarehouse } from '../options.ts';

export function registerCollect(program: Command): void {
  withWarehouse(
    program
      .command('collect')
      .description('collect session reports posted by the SDK and land them as Parquet (logs on stderr)')
      .option('--port <port>', 'port (env COLLECTOR_PORT, default 3001)')
      .option('--host <host>', 'interface (env COLLECTOR_HOST, else HOST, default 127.0.0.1)')
      .option('--spool <dir>', "this collector's own spool folder (env COLLECTOR_SPOOL_DIR, default <warehouse>/spool/<host>-<port>)")
      .option('--metrics-port <port>', 'serve GET /metrics (Prometheus) on this port of METRICS_HOST (env COLLECTOR_METRICS_PORT; default: none)'),
  ).action(commandAction(() => import('../actions/collect.ts')));
}
