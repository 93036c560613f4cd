// The `collect` command's work: start a collector and stop it cleanly (landing its spool) on
// SIGINT or SIGTERM.
import { z } from 'zod';
import { parseOption } from '../runtime.ts';
import { loadConfig, type AppConfig } from '../../lib/config.ts';
import { createLogger, type Logger } from '../../lib/log.ts';
import { startCollector, type RunningCollector } from '../../collector/server.ts';

export interface CollectFlags {
  warehouse?: string;
  port?: string;
  host?: string;
  spool?: string;
  metricsPort?: string;
}

const port = z.coerce.number().int().min(0).max(65535);

/** Config of a collector process: flags over env. */
export function collectConfig(flags: CollectFlags & { port?: string | undefined }, defaultLogLevel: 'info' | 'warn' = 'info'): AppConfig {
  return loadConfig({
    warehouseDir: flags.warehouse,
    collectorPort: flags.port === undefined ? undefined : parseOption('port', port, flags.port),
    collectorHost: flags.host,
    spoolDir: flags.spool,
    collectorMetricsPort: flags.metricsPort === undefined ? undefined : parseOption('metrics-port', port, flags.metricsPort),
    defaultLogLevel,
  });
}

/** Stop the collector on SIGINT/SIGTERM, once: it stops taking requests and lands its spool. */
export function stopCollectorOnSignals(collector: RunningCollector, log: Logger): Promise<void> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'collector: stopping, landing the spool');
      void collector.close().then(resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}

export async function runCollect(flags: CollectFlags): Promise<void> {
  const config = collectConfig(flags);
  const log = createLogger(config.logLevel, 'p2ptel-collector', 'buffered');
  const collector = await startCollector(config, log);
  process.stderr.write(`collector listening on ${collector.url} (warehouse ${config.warehouseDir})${collector.metricsUrl ? `; metrics on ${collector.metricsUrl}` : ''}\n`);
  await stopCollectorOnSignals(collector, log);
}
