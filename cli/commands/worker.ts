// `worker`: one process of the worker tier. Run as many as you like, on any machine that reaches
// the Redis and the warehouse folder; each takes plans, customer partitions and publications.
import type { Command } from 'commander';
import { action, parseOption, runtime } from '../runtime.ts';
import { positiveInt, positiveNumber, withRedis, withWarehouse } from '../options.ts';

interface WorkerFlags {
  warehouse?: string;
  redis?: string;
  queuePrefix?: string;
  concurrency?: string;
  graceSeconds?: string;
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
        ),
    ),
  ).action(
    action(async (flags: WorkerFlags) => {
      const rt = runtime(flags, 'service');
      const worker = { ...rt.config.worker };
      if (flags.concurrency !== undefined) worker.concurrency = parseOption('concurrency', positiveInt, flags.concurrency);
      if (flags.graceSeconds !== undefined) {
        worker.shutdownGraceMs = Math.round(parseOption('grace-seconds', positiveNumber, flags.graceSeconds) * 1000);
      }
      const { runWorker } = await import('../../jobs/queue/worker-process.ts');
      await runWorker({ config: { ...rt.config, worker }, log: rt.log });
      // A job handed back may still be running inside DuckDB: leave without waiting for it.
      process.exit(0);
    }),
  );
}
