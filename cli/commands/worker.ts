// `worker`: one process of the worker tier. Run as many as you like, on any machine that reaches
// the Redis and the warehouse folder; each takes plans, customer partitions and publications.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withRedis, withWarehouse } from '../options.ts';

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
  ).action(commandAction(() => import('../actions/worker.ts')));
}
