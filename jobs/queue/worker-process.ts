// A worker process from start to exit (what `cli worker` runs): check Redis, open DuckDB and the
// queues, work (keeping the schedules installed: schedule-keeper.ts) until SIGTERM or SIGINT, then stop within the grace time and close everything. A
// signal at any moment of the start-up stops it as cleanly: what is open is closed, exit 0.
import type { AppConfig } from '../../lib/config.ts';
import type { Logger } from '../../lib/log.ts';
import { terminationSignal } from '../../lib/signals.ts';
import { openJobDeps } from '../deps.ts';
import { openQueues } from './client.ts';
import { redactUrl } from './connection.ts';
import { JOBS, QUEUES } from './names.ts';
import { defaultProcessors, gateOf, type Processors, type WorkerContext } from './processors.ts';
import { startWorkers, workerName, type OnSettled, type StopOutcome, type WorkerTier } from './worker.ts';
import { startCoalesced } from './tick-gate.ts';
import { bindQueueMetrics } from './metrics.ts';
import { keepSchedules } from './schedule-keeper.ts';
import { WorkerAlerts } from '../../alerts/worker-alerts.ts';
import { startDeliveryWorker, WebhookQueue } from '../../alerts/webhooks/delivery-queue.ts';
import type { Evaluation } from '../../alerts/evaluate.ts';
import type { Worker } from 'bullmq';
import { collectProcessMetrics, listenMetrics, type MetricsListener } from '../../lib/metrics.ts';

export interface RunWorkerOptions {
  config: AppConfig;
  log: Logger;
  /** Replace or wrap handlers (test fixtures use it to hold a job open). */
  processors?: (defaults: Processors, ctx: WorkerContext) => Processors;
  onReady?: (tier: WorkerTier) => void;
  /** Resolves when the process should stop; default: the first SIGTERM or SIGINT. */
  stopSignal?: Promise<string>;
  /** Called after each alert evaluation, before its events are enqueued (the crash tests stop there). */
  onAlertsEvaluated?: (e: Evaluation) => Promise<void> | void;
}

/** What a started worker process holds open. */
interface OpenWorker {
  ctx: WorkerContext;
  tier: WorkerTier;
  metrics: MetricsListener | null;
  keeper: { stop(): void } | null;
  /** The `webhooks` queue's worker, started once the others are ready. */
  deliveries: Worker | null;
  closeDeps(): Promise<void>;
}

const within = (p: Promise<unknown>, ms: number) => Promise.race([p, new Promise((r) => setTimeout(r, ms).unref())]);

const STOPPED: unique symbol = Symbol('stopped');

/** `step`'s value, or STOPPED when the stop signal comes first (what the step opens after that, the process's exit ends). */
function unlessStopped<T>(step: Promise<T>, stop: Promise<string>): Promise<T | typeof STOPPED> {
  return Promise.race([step, stop.then((): typeof STOPPED => STOPPED)]);
}

export async function runWorker(opts: RunWorkerOptions): Promise<StopOutcome> {
  const { config, log } = opts;
  // Listen before anything slow (bin/p2ptel.js kept any signal that came while loading).
  const stopSignal = opts.stopSignal ?? terminationSignal(log);
  const open = await openWorker(opts, stopSignal);
  if (!open) {
    log.info({ signal: await stopSignal }, 'worker stopped during start-up');
    return { finished: true, handedBack: [] };
  }
  log.info(
    {
      worker: open.tier.name,
      redis: redactUrl(config.redis.url),
      prefix: config.redis.prefix,
      queues: Object.values(QUEUES),
      concurrency: config.worker.concurrency,
      metrics: open.metrics?.url ?? null,
    },
    'worker ready',
  );
  opts.onReady?.(open.tier);
  return stopWorker(open, await stopSignal);
}

/** Redis, DuckDB, metrics and the queue workers, opened in turn; null when stopped meanwhile. */
async function openWorker(opts: RunWorkerOptions, stop: Promise<string>): Promise<OpenWorker | null> {
  const { config, log } = opts;
  const queues = await unlessStopped(openQueues(config.redis, 'service', log), stop);
  if (queues === STOPPED) return null;
  const deps = await unlessStopped(openJobDeps(config, log), stop).catch(async (err: unknown) => {
    await queues.close();
    throw err;
  });
  if (deps === STOPPED) {
    await queues.close();
    return null;
  }
  const ctx: WorkerContext = { deps, queues, config, log, workerName: workerName(), alerts: workerAlerts(opts, deps, queues) };
  const metrics = await listenWorkerMetrics(ctx);
  const defaults = defaultProcessors(ctx);
  const tier = startWorkers(ctx, opts.processors ? opts.processors(defaults, ctx) : defaults, startCoalescedAfter(ctx));
  const open: OpenWorker = { ctx, tier, metrics, keeper: null, deliveries: null, closeDeps: () => deps.close() };
  // Half started (failed, or stopped): close what is open, or its reconnecting clients would keep the process alive.
  const ready = await unlessStopped(open.tier.ready, stop).catch(async (err: unknown) => {
    await closeWorker(open, 1000);
    throw err;
  });
  if (ready !== STOPPED) {
    open.keeper = keepSchedules({ queues, layout: deps.layout, jobs: config.jobs, log });
    open.deliveries = startDeliveries(ctx);
    return open;
  }
  await closeWorker(open, 1000);
  return null;
}

/** Alerts and their webhook queue, on the process's Redis connection. */
function workerAlerts(opts: RunWorkerOptions, deps: WorkerContext['deps'], queues: WorkerContext['queues']): WorkerAlerts {
  const { config, log } = opts;
  const a = config.alerts;
  const q = WebhookQueue.open(deps.layout, { timeoutMs: a.deliveryTimeoutMs, allowPrivate: a.allowPrivateTargets, retryForMs: a.retryForMs }, queues.client, config.redis.prefix, log);
  return new WorkerAlerts(deps, q, log, a.sweepMs, opts.onAlertsEvaluated);
}

/** The `webhooks` queue's worker and the sweep that keeps the queue whole. */
function startDeliveries(ctx: WorkerContext): Worker | null {
  if (!ctx.alerts) return null;
  const a = ctx.config.alerts;
  const w = startDeliveryWorker(
    ctx.alerts.deliveries,
    { connection: ctx.queues.client, prefix: ctx.config.redis.prefix, concurrency: a.deliveryConcurrency, timeoutMs: a.deliveryTimeoutMs, workerName: ctx.workerName,
      lock: { lockDuration: ctx.config.worker.lockDurationMs, stalledInterval: ctx.config.worker.stalledIntervalMs, maxStalledCount: ctx.config.worker.maxStalledCount } },
    ctx.log,
  );
  ctx.alerts.start();
  return w;
}

async function listenWorkerMetrics(ctx: WorkerContext): Promise<MetricsListener | null> {
  const { metrics } = ctx.config.worker;
  if (!metrics) return null;
  collectProcessMetrics();
  bindQueueMetrics(ctx.queues);
  return listenMetrics(metrics.port, metrics.host);
}

/** Take no new job, let running ones finish within the grace time (or hand them back), close. */
async function stopWorker(open: OpenWorker, signal: string): Promise<StopOutcome> {
  const { config, log } = open.ctx;
  const graceMs = config.worker.shutdownGraceMs;
  log.info({ signal, graceMs }, 'shutting down');
  // Whatever hangs (Redis gone mid-shutdown), the process is out within the grace time.
  const hardStop = setTimeout(() => {
    log.warn('grace time over: exiting now');
    process.exit(0);
  }, graceMs);
  hardStop.unref();
  const outcome = await closeWorker(open, graceMs);
  clearTimeout(hardStop);
  log.info({ handedBack: outcome.handedBack }, 'worker stopped');
  return outcome;
}

async function closeWorker({ ctx, tier, metrics, keeper, deliveries, closeDeps }: OpenWorker, graceMs: number): Promise<StopOutcome> {
  keeper?.stop();
  // An attempt lasts at most WEBHOOK_TIMEOUT_SECONDS; one cut short is retried (same webhook-id).
  const deliveriesClosed = Promise.allSettled([deliveries?.close(), ctx.alerts?.stop()]);
  const outcome = await tier.stop(graceMs);
  await within(deliveriesClosed, 2000);
  await ctx.alerts?.deliveries.stop().catch(() => {});
  await metrics?.close();
  bindQueueMetrics(null);
  await ctx.queues.close();
  // DuckDB is still busy with a handed-back job: the process exit ends that work.
  if (outcome.finished) await closeDeps();
  return outcome;
}

/** When a run publishes or a step of one fails for good, the tick coalesced behind it starts its run. */
function startCoalescedAfter(ctx: WorkerContext): OnSettled {
  const gate = gateOf(ctx);
  return (queue, job, outcome) => {
    if (queue === QUEUES.reports || queue === QUEUES.compaction || (outcome === 'completed' && job.name !== JOBS.publish)) return;
    startCoalesced(gate).then(
      (run) => run && ctx.log.info({ asOf: run.asOf.toISOString(), coalesced: run.fireTime.toISOString() }, 'started the run of the ticks coalesced behind the run that ended'),
      (err: unknown) => ctx.log.warn({ err: (err as Error).message }, 'could not start the run of coalesced ticks; the next tick will'),
    );
  };
}
