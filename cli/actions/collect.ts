// The `collect` command's work: start a collector and stop it cleanly (landing its spool) on
// SIGINT or SIGTERM.
import { z } from 'zod';
import { port } from '../options.ts';
import { loadConfig, type AppConfig } from '../../lib/config.ts';
import { createLogger, type Logger } from '../../lib/log.ts';
// The collector itself is loaded by run(), after the flags are checked.
import type { RunningCollector } from '../../collector/server.ts';

export const Flags = z.object({
  warehouse: z.string().optional(),
  port: port.optional(),
  host: z.string().optional(),
  spool: z.string().optional(),
  metricsPort: port.optional(),
});

/** Config of a collector process: flags over env. */
export function collectConfig(flags: z.output<typeof Flags>, defaultLogLevel: 'info' | 'warn' = 'info'): AppConfig {
  return loadConfig({
    warehouseDir: flags.warehouse,
    collectorPort: flags.port,
    collectorHost: flags.host,
    spoolDir: flags.spool,
    collectorMetricsPort: flags.metricsPort,
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

export async function run(flags: z.output<typeof Flags>): Promise<void> {
  const config = collectConfig(flags);
  const log = createLogger(config.logLevel, 'p2ptel-collector', 'buffered');
  const { startCollector } = await import('../../collector/server.ts');
  const collector = await startCollector(config, log);
  process.stderr.write(`collector listening on ${collector.url} (warehouse ${config.warehouseDir})${collector.metricsUrl ? `; metrics on ${collector.metricsUrl}` : ''}\n`);
  await stopCollectorOnSignals(collector, log);
}
