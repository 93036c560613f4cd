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
  const { config, log } = ctx;
  const running = new Map<string, { job: Job; token: string | undefined; log: Logger }>();

  const processorFor = (queue: QueueName) => async (job: Job, token?: string) => {
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
      const attempts = job.opts.attempts ?? 1;
      const final = err instanceof UnrecoverableError || job.attemptsMade + 1 >= attempts;
      jobLog[final ? 'error' : 'warn']({ err: err instanceof Error ? err.message : String(err), ms: Date.now() - started, final }, final ? 'job failed' : 'job failed; it will be retried');
      observeJob(queue, job.name, final ? 'failed' : 'retry', Date.now() - started);
      throw err;
    } finally {
      running.delete(key);
    }
  };

  const common = {
    connection: ctx.queues.client,
    prefix: config.redis.prefix,
    name: ctx.workerName,
    lockDuration: config.worker.lockDurationMs,
    stalledInterval: config.worker.stalledIntervalMs,
    maxStalledCount: config.worker.maxStalledCount,
  };
  const specs: { queue: QueueName; concurrency: number }[] = [
    // Run-level steps are short (plan) or one per run (publish): one at a time, and a second slot
    // so that a scheduler's tick is never stuck behind a long one (its fire time would be missed).
    { queue: QUEUES.rollup, concurrency: 2 },
    { queue: QUEUES.partitions, concurrency: config.worker.concurrency },
    { queue: QUEUES.reports, concurrency: 1 },
    // One compaction at a time runs in a warehouse anyway (its lock): one slot per process.
    { queue: QUEUES.compaction, concurrency: 1 },
  ];
  // While Redis is away every worker reports each reconnect attempt: one line per error and
  // queue every 10 s is enough to see it.
  const lastLogged = new Map<string, number>();
  const workers = specs.map(({ queue, concurrency }) => {
    const w = new Worker(queue, processorFor(queue), { ...common, concurrency });
    w.on('error', (err) => {
      const key = `${queue}\n${err.message}`;
      if (Date.now() - (lastLogged.get(key) ?? 0) < 10_000) return;
      lastLogged.set(key, Date.now());
      log.error({ queue, err: err.message }, 'worker error');
    });
    w.on('completed', (job) => onSettled(queue, job, 'completed'));
    w.on('failed', (job) => job && onSettled(queue, job, 'failed'));
    // Emitted by the worker whose stalled-job check found a job whose worker died.
    w.on('stalled', (jobId) => log.warn({ queue, jobId }, 'stalled job (its worker died) moved back to wait'));
    return w;
  });

  let stopping: Promise<StopOutcome> | null = null;
  return {
    name: ctx.workerName,
    ready: Promise.all(workers.map((w) => w.waitUntilReady())).then(() => undefined),
    active: () => [...running.values()].map((r) => r.job.id ?? ''),
    stop(graceMs) {
      stopping ??= (async () => {
        log.info({ graceMs, running: running.size }, 'stopping: taking no new jobs, waiting for running ones');
        const closed = Promise.allSettled(workers.map((w) => w.close()));
        // Keep a little of the grace time to hand jobs back and close connections.
        const margin = Math.min(2000, graceMs / 4);
        if ((await within(closed, graceMs - margin)) !== 'timeout') return { finished: true, handedBack: [] };

        const handedBack: string[] = [];
        for (const { job, token, log: jobLog } of running.values()) {
          try {
            // Back to the head of its queue, lock released, no attempt used up: another worker
            // takes it at once instead of waiting for it to be found stalled.
            const r = await within(job.moveToWait(token), 1000);
            if (r === 'timeout') throw new Error('Redis did not answer');
            handedBack.push(job.id ?? '');
            jobLog.warn('job handed back to the queue: it did not finish within the grace time');
          } catch (err) {
            jobLog.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not hand the job back; it is retaken once its lock expires');
          }
        }
        // close() is still waiting for the abandoned jobs; cut the workers' own connections.
        await within(Promise.allSettled(workers.map((w) => w.disconnect())), 500);
        return { finished: false, handedBack };
      })();
      return stopping;
    },
  };
}
