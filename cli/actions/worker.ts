// The `worker` command's work: one process of the worker tier, until SIGTERM.
import { noFlags } from '../options.ts';
import { runtime } from '../runtime.ts';
import { WORKER_DEFAULTS } from '../../lib/settings/command-defaults.ts';
import type { SettingOverrides } from '../../lib/config.ts';

/** Its flags are all settings' (WORKER_CONCURRENCY, WORKER_SHUTDOWN_GRACE_SECONDS, WORKER_METRICS_PORT, REDIS_URL, QUEUE_PREFIX). */
export const Flags = noFlags;

/** Its DuckDB's memory limit is its own (lib/settings/command-defaults.ts). */
export async function run(_flags: unknown, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings, 'service', WORKER_DEFAULTS);
  const { runWorker } = await import('../../jobs/queue/worker-process.ts');
  await runWorker(rt);
  // A job handed back may still be running inside DuckDB: leave without waiting for it.
  process.exit(0);
}
