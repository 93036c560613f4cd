// `worker`: one process of the worker tier. Run as many as you like, on any machine that reaches
// the Redis and the warehouse folder; each takes plans, customer partitions and publications.
import type { Command } from 'commander';
import { action, parseOption, runtime } from '../runtime.ts';
import { z } from 'zod';
import { positiveInt, positiveNumber, withRedis, withWarehouse } from '../options.ts';

const port = z.coerce.number().int().min(0).max(65535);

interface WorkerFlags {
  warehouse?: string;
  redis?: string;
  queuePrefix?: string;
  concurrency?: string;
  graceSeconds?: string;
  metricsPort?: string;
}

export function registerWorker(program: Command): void {
  withRedis(
    withWarehouse(
      program
        .command('worker')
        .description('run a worker: takes rollup and report jobs from Redis until SIGTERM (logs on stderr)')
        .option('--concurrency <n>', 'customer partitions this process computes at once (env WORKER_CONCURRENCY, default 1)')
        .option(
          '--grace-seconds <s>',
          'after SIGTERM, time to finish running jobs before handing them back and exiting (env WORKER_SHUTDOWN_GRACE_SECONDS, default 30)',
        )
        .option('--metrics-port <port>', 'serve GET /metrics (Prometheus) on this port, on METRICS_HOST (default 127.0.0.1) (env WORKER_METRICS_PORT)'),
    ),
  ).action(
    action(async (flags: WorkerFlags) => {
      const rt = runtime(flags, 'service');
      const worker = { ...rt.config.worker };
      if (flags.concurrency !== undefined) worker.concurrency = parseOption('concurrency', positiveInt, flags.concurrency);
      if (flags.graceSeconds !== undefined) {
        worker.shutdownGraceMs = Math.round(parseOption('grace-seconds', positiveNumber, flags.graceSeconds) * 1000);
      }
      if (flags.metricsPort !== undefined) {
        worker.metrics = { port: parseOption('metrics-port', port, flags.metricsPort), host: rt.config.metricsHost };
      }
      const { runWorker } = await import('../../jobs/queue/worker-process.ts');
      await runWorker({ config: { ...rt.config, worker }, log: rt.log });
      // A job handed back may still be running inside DuckDB: leave without waiting for it.
      process.exit(0);
    }),
  );
}
