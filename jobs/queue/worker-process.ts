// A worker process from start to exit (what `cli worker` runs): check Redis, open DuckDB and the
// queues, work until SIGTERM or SIGINT, then stop within the grace time and close everything.
import type { AppConfig } from '../../lib/config.ts';
import type { Logger } from '../../lib/log.ts';
import { openJobDeps } from '../deps.ts';
import { openQueues } from './client.ts';
import { redactUrl } from './connection.ts';
import { JOBS, QUEUES } from './names.ts';
import { defaultProcessors, gateOf, type Processors, type WorkerContext } from './processors.ts';
import { startWorkers, workerName, type OnSettled, type StopOutcome, type WorkerTier } from './worker.ts';
import { startCoalesced } from './tick-gate.ts';
import { bindQueueMetrics } from './metrics.ts';
import { collectProcessMetrics, listenMetrics, type MetricsListener } from '../../lib/metrics.ts';

export interface RunWorkerOptions {
  config: AppConfig;
  log: Logger;
  /** Replace or wrap handlers (test fixtures use it to hold a job open). */
  processors?: (defaults: Processors, ctx: WorkerContext) => Processors;
  onReady?: (tier: WorkerTier) => void;
  /** Resolves when the process should stop; default: the first SIGTERM or SIGINT. */
  stopSignal?: Promise<string>;
}

/** The first SIGTERM or SIGINT; a second one exits at once (running jobs are retaken by others). */
export function terminationSignal(log: Logger): Promise<string> {
  return new Promise((resolve) => {
    let received = false;
    const on = (signal: NodeJS.Signals) => {
      if (received) {
        log.warn({ signal }, 'second signal: exiting now; running jobs are retaken once their locks expire');
        process.exit(0);
      }
      received = true;
      resolve(signal);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  });
}

export async function runWorker(opts: RunWorkerOptions): Promise<StopOutcome> {
  const { config, log } = opts;
  // Listen before anything slow, so that a SIGTERM during startup still stops us cleanly.
  const stopSignal = opts.stopSignal ?? terminationSignal(log);
  const queues = await openQueues(config.redis, 'service', log);
  const deps = await openJobDeps(config, log).catch(async (err: unknown) => {
    await queues.close();
    throw err;
  });
  const ctx: WorkerContext = { deps, queues, config, log, workerName: workerName() };
  let metrics: MetricsListener | null = null;
  if (config.worker.metrics) {
    collectProcessMetrics();
    bindQueueMetrics(queues);
    metrics = await listenMetrics(config.worker.metrics.port, config.worker.metrics.host);
  }
  const defaults = defaultProcessors(ctx);
  const tier = startWorkers(ctx, opts.processors ? opts.processors(defaults, ctx) : defaults, startCoalescedAfter(ctx));
  try {
    await Promise.race([tier.ready, stopSignal]);
  } catch (err) {
    // Half started: close what is open, or its reconnecting clients would keep the process alive.
    await tier.stop(1000);
    await metrics?.close();
    await queues.close();
    await deps.close();
    throw err;
  }
  log.info(
    {
      worker: tier.name,
      redis: redactUrl(config.redis.url),
      prefix: config.redis.prefix,
      queues: Object.values(QUEUES),
      concurrency: config.worker.concurrency,
      metrics: metrics?.url ?? null,
    },
    'worker ready',
  );
  opts.onReady?.(tier);

  const signal = await stopSignal;
  const graceMs = config.worker.shutdownGraceMs;
  log.info({ signal, graceMs }, 'shutting down');
  // Whatever hangs (Redis gone mid-shutdown), the process is out within the grace time.
  const hardStop = setTimeout(() => {
    log.warn('grace time over: exiting now');
    process.exit(0);
  }, graceMs);
  hardStop.unref();
  const outcome = await tier.stop(graceMs);
  await metrics?.close();
  bindQueueMetrics(null);
  await queues.close();
  // DuckDB is still busy with a handed-back job: the process exit ends that work.
  if (outcome.finished) await deps.close();
  clearTimeout(hardStop);
  log.info({ handedBack: outcome.handedBack }, 'worker stopped');
  return outcome;
}

/** When a run publishes or a step of one fails for good, the tick coalesced behind it starts its run. */
function startCoalescedAfter(ctx: WorkerContext): OnSettled {
  const gate = gateOf(ctx);
  return (queue, job, outcome) => {
    if (queue === QUEUES.reports || (outcome === 'completed' && job.name !== JOBS.publish)) return;
    startCoalesced(gate).then(
      (asOf) => asOf && ctx.log.info({ asOf: asOf.toISOString() }, 'started the run of the ticks coalesced behind the run that ended'),
      (err: unknown) => ctx.log.warn({ err: (err as Error).message }, 'could not start the run of coalesced ticks; the next tick will'),
    );
  };
}
