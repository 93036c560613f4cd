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
 * V8's rule for when to collect the old generation again, for a collector process. At saturation
 * V8 measured its full collections as cheap next to the event loop's allocation and let the old
 * generation grow only ~10–20 % between them; marking starts once less room is left than the young
 * generation holds, so one full collection followed another every ~200 ms (64 in 18 s of load,
 * 10–18 ms of pause each, plus their marking on the other threads). A fixed growth of 300 % (the
 * heap's ~20 MB may reach ~80 MB before the next) leaves a few in the same load
 * (bench:ingest, docs/operations.md). Set before anything else runs: a V8 flag is process-wide and
 * read each time V8 sets its next limit.
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
