// The `collect` command's work: start a collector and stop it cleanly (landing its spool) on
// SIGINT or SIGTERM.
import v8 from 'node:v8';
import { noFlags } from '../options.ts';
import { closeOnSignals, commandConfig } from '../runtime.ts';
import type { SettingOverrides } from '../../lib/config.ts';
import { createLogger, type Logger } from '../../lib/log.ts';
// The collector itself is loaded by run(), after the flags are checked.
import type { RunningCollector } from '../../collector/server.ts';

/** Its flags are all settings' (COLLECTOR_PORT, COLLECTOR_HOST, COLLECTOR_SPOOL_DIR, COLLECTOR_METRICS_PORT). */
export const Flags = noFlags;

/** Stop the collector on SIGINT/SIGTERM, once: it stops taking requests and lands its spool. */
export function stopCollectorOnSignals(collector: RunningCollector, log: Logger): Promise<void> {
  return closeOnSignals(collector, log, 'collector: stopping, landing the spool');
}

/**
 * V8's rule for when to collect the old generation again, for a collector process: a fixed growth
 * between full collections, since V8's own rule ran one after another at saturation (the figures:
 * docs/operations.md, "V8's heap growth"). Set before anything else runs: a V8 flag is
 * process-wide and read each time V8 sets its next limit.
 */
export function tuneHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}

export async function run(_flags: unknown, settings: SettingOverrides): Promise<void> {
  const config = commandConfig(settings, 'service');
  tuneHeapGrowth(config.collector.heapGrowingPercent);
  const log = createLogger(config.logLevel, 'p2ptel-collector', 'buffered');
  const { startCollector } = await import('../../collector/server.ts');
  const collector = await startCollector(config, log);
  process.stderr.write(`collector listening on ${collector.url} (warehouse ${config.warehouseDir})${collector.metricsUrl ? `; metrics on ${collector.metricsUrl}` : ''}\n`);
  await stopCollectorOnSignals(collector, log);
}
