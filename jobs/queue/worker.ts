// The BullMQ workers of one process: one per queue, dispatching each job to its handler, logging
// with job ids, and stopping gracefully: no new jobs, running ones finish within a grace time or
// are handed back to the queue for another worker.
import os from 'node:os';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Logger } from '../../lib/log.ts';
import { JOBS, QUEUES, type QueueName } from './names.ts';
import { observeJob } from './metrics.ts';
import type { JobHandler, Processors, WorkerContext } from './processors.ts';

export interface StopOutcome {
  /** True when every running job finished within the grace time. */
  finished: boolean;
  /** Jobs put back in their queue (for another worker) because they did not finish in time. */
  handedBack: string[];
}

export interface WorkerTier {
  name: string;
  /** Resolves once every worker is connected and waiting for jobs. */
  ready: Promise<void>;
  /** Ids of the jobs running now. */
  active(): string[];
  stop(graceMs: number): Promise<StopOutcome>;
}

export function workerName(): string {
  return `${os.hostname()}#${process.pid}`;
}

function handlerFor(processors: Processors, queue: QueueName, name: string): JobHandler | undefined {
  if (queue === QUEUES.rollup) return name === JOBS.tick ? processors.tick : name === JOBS.plan ? processors.plan : name === JOBS.publish ? processors.publish : undefined;
  if (queue === QUEUES.partitions) return name === JOBS.partition ? processors.partition : undefined;
  if (queue === QUEUES.compaction) return name === JOBS.compact ? processors.compact : undefined;
  return name === JOBS.tick ? processors.tick : name === JOBS.reports ? processors.reports : undefined;
}

const sleep = (ms: number) => new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms));

async function within<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  return Promise.race([p, sleep(ms)]);
}

/** Told of each job this process finished: a run step ending may let a coalesced tick start (tick-gate.ts). */
export type OnSettled = (queue: QueueName, job: Job, outcome: 'completed' | 'failed') => void;

export function startWorkers(ctx: WorkerContext, processors: Processors, onSettled: OnSettled = () => {}): WorkerTier {
  const running: Running = new Map();
  const workers = WORKER_SPECS(ctx.config).map(({ queue, concurrency }) =>
    queueWorker(ctx, queue, concurrency, jobProcessor(ctx.log, processors, queue, running), onSettled),
  );
  let stopping: Promise<StopOutcome> | null = null;
  return {
    name: ctx.workerName,
    ready: Promise.all(workers.map((w) => w.waitUntilReady())).then(() => undefined),
    active: () => [...running.values()].map((r) => r.job.id ?? ''),
    stop(graceMs) {
      stopping ??= stopWorkers(ctx.log, workers, running, graceMs);
      return stopping;
    },
  };
}

/** The jobs this process runs now, by queue and id, with their lock tokens and loggers. */
type Running = Map<string, { job: Job; token: string | undefined; log: Logger }>;

/** The queues a worker process takes jobs from, each with its concurrency. */
const WORKER_SPECS = (config: WorkerContext['config']): { queue: QueueName; concurrency: number }[] => [
  // Run-level steps are short (plan) or one per run (publish): one at a time, and a second slot
  // so that a scheduler's tick is never stuck behind a long one (its fire time would be missed).
  { queue: QUEUES.rollup, concurrency: 2 },
  { queue: QUEUES.partitions, concurrency: config.worker.concurrency },
  { queue: QUEUES.reports, concurrency: 1 },
  // One compaction at a time runs in a warehouse anyway (its lock): one slot per process.
  { queue: QUEUES.compaction, concurrency: 1 },
];

/** A queue's processor: the job's handler, logged, timed and counted, and known while it runs. */
function jobProcessor(log: Logger, processors: Processors, queue: QueueName, running: Running) {
  return async (job: Job, token?: string) => {
    const jobLog = log.child({ queue, jobId: job.id, job: job.name, attempt: job.attemptsMade + 1 });
    const handler = handlerFor(processors, queue, job.name);
    if (!handler) throw new UnrecoverableError(`no handler for ${job.name} jobs on queue ${queue}`);
    const key = `${queue}/${job.id}`;
    running.set(key, { job, token, log: jobLog });
    const started = Date.now();
    jobLog.info('job started');
    try {
      const result = await handler(job, jobLog);
      jobLog.info({ ms: Date.now() - started }, 'job done');
      observeJob(queue, job.name, 'done', Date.now() - started);
      return result;
    } catch (err) {
      logJobFailure(jobLog, queue, job, err, started);
      throw err;
    } finally {
      running.delete(key);
    }
  };
}

/** A failed attempt, logged and counted: final (an error) or to be retried (a warning). */
function logJobFailure(jobLog: Logger, queue: QueueName, job: Job, err: unknown, started: number): void {
  const attempts = job.opts.attempts ?? 1;
  const final = err instanceof UnrecoverableError || job.attemptsMade + 1 >= attempts;
  jobLog[final ? 'error' : 'warn']({ err: err instanceof Error ? err.message : String(err), ms: Date.now() - started, final }, final ? 'job failed' : 'job failed; it will be retried');
  observeJob(queue, job.name, final ? 'failed' : 'retry', Date.now() - started);
}

/**
 * The BullMQ worker of one queue, with the process's lock and stall settings, its errors logged
 * (at most one line per error and queue every 10 s while Redis is away: every worker reports each
 * reconnect attempt) and each settled job told to `onSettled`.
 */
function queueWorker(ctx: WorkerContext, queue: QueueName, concurrency: number, processor: ReturnType<typeof jobProcessor>, onSettled: OnSettled): Worker {
  const { config, log } = ctx;
  const w = new Worker(queue, processor, {
    connection: ctx.queues.client,
    prefix: config.redis.prefix,
    name: ctx.workerName,
    lockDuration: config.worker.lockDurationMs,
    stalledInterval: config.worker.stalledIntervalMs,
    maxStalledCount: config.worker.maxStalledCount,
    concurrency,
  });
  const lastLogged = new Map<string, number>();
  w.on('error', (err) => {
    if (Date.now() - (lastLogged.get(err.message) ?? 0) < 10_000) return;
    lastLogged.set(err.message, Date.now());
    log.error({ queue, err: err.message }, 'worker error');
  });
  w.on('completed', (job) => onSettled(queue, job, 'completed'));
  w.on('failed', (job) => job && onSettled(queue, job, 'failed'));
  // Emitted by the worker whose stalled-job check found a job whose worker died.
  w.on('stalled', (jobId) => log.warn({ queue, jobId }, 'stalled job (its worker died) moved back to wait'));
  return w;
}

/**
 * Take no new jobs and wait for the running ones within `graceMs`; past it, hand each running job
 * back to its queue (another worker takes it at once) and cut the workers' connections.
 */
async function stopWorkers(log: Logger, workers: readonly Worker[], running: Running, graceMs: number): Promise<StopOutcome> {
  log.info({ graceMs, running: running.size }, 'stopping: taking no new jobs, waiting for running ones');
  const closed = Promise.allSettled(workers.map((w) => w.close()));
  // Keep a little of the grace time to hand jobs back and close connections.
  const margin = Math.min(2000, graceMs / 4);
  if ((await within(closed, graceMs - margin)) !== 'timeout') return { finished: true, handedBack: [] };
  const handedBack: string[] = [];
  for (const { job, token, log: jobLog } of running.values()) if (await handBack(job, token, jobLog)) handedBack.push(job.id ?? '');
  // close() is still waiting for the abandoned jobs; cut the workers' own connections.
  await within(Promise.allSettled(workers.map((w) => w.disconnect())), 500);
  return { finished: false, handedBack };
}

/** Back to the head of its queue, lock released, no attempt used up; false when Redis does not answer. */
async function handBack(job: Job, token: string | undefined, jobLog: Logger): Promise<boolean> {
  try {
    const r = await within(job.moveToWait(token), 1000);
    if (r === 'timeout') throw new Error('Redis did not answer');
    jobLog.warn('job handed back to the queue: it did not finish within the grace time');
    return true;
  } catch (err) {
    jobLog.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not hand the job back; it is retaken once its lock expires');
    return false;
  }
}
