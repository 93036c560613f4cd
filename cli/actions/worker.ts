// The `worker` command's work: one process of the worker tier, until SIGTERM.
import { z } from 'zod';
import { runtime } from '../runtime.ts';
import { port, positiveInt, positiveNumber } from '../options.ts';

export const Flags = z.object({
  warehouse: z.string().optional(),
  redis: z.string().optional(),
  queuePrefix: z.string().optional(),
  concurrency: positiveInt.optional(),
  graceSeconds: positiveNumber.optional(),
  metricsPort: port.optional(),
});

export async function run(flags: z.output<typeof Flags>): Promise<void> {
  const rt = runtime(flags, 'service');
  const worker = { ...rt.config.worker };
  if (flags.concurrency !== undefined) worker.concurrency = flags.concurrency;
  if (flags.graceSeconds !== undefined) worker.shutdownGraceMs = Math.round(flags.graceSeconds * 1000);
  if (flags.metricsPort !== undefined) worker.metrics = { port: flags.metricsPort, host: rt.config.metricsHost };
  const { runWorker } = await import('../../jobs/queue/worker-process.ts');
  await runWorker({ config: { ...rt.config, worker }, log: rt.log });
  // A job handed back may still be running inside DuckDB: leave without waiting for it.
  process.exit(0);
}
