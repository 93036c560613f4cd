// Webhook deliveries on the worker tier: the outbox's records on disk (lane `queue`: what GET
// /control/webhooks/:id/deliveries lists on both tiers) stepped by jobs of a BullMQ queue. A job
// per delivery (its id the delivery's, so adding it twice is one job) takes its endpoint's lock in
// Redis, attempts the endpoint's oldest due delivery (in order per endpoint), and waits in the
// queue's delayed set until the next try (exponential backoff with jitter, Retry-After, for
// WEBHOOK_RETRY_HOURS; 410 Gone and a day of failures disable the endpoint: outbox.ts). A slow
// receiver holds one of WEBHOOK_CONCURRENCY slots, never more (the other jobs of its endpoint
// wait delayed, not in a slot); the queue has its own worker, apart from the rollups' queues.
import { randomBytes } from 'node:crypto';
import { DelayedError, Queue, Worker, type Job, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { WarehouseLayout } from '../../warehouse/layout.ts';
import type { Logger } from '../../lib/log.ts';
import { WebhookOutbox, type OutboxOptions, type OutgoingEvent } from './outbox.ts';
import type { Delivery } from './delivery-record.ts';
import type { StoredEndpoint } from './endpoint-schema.ts';

export const WEBHOOK_QUEUE = 'webhooks';
const JOB = 'deliver';
const DAY_S = 86_400;
/** How long a job whose endpoint is busy waits before it looks again. */
const BUSY_WAIT_MS = 1_000;

const DeliveryJob = z.object({ tenantId: z.string(), endpointId: z.string(), deliveryId: z.string() });
type DeliveryJob = z.infer<typeof DeliveryJob>;

const JOB_OPTIONS: JobsOptions = {
  // The schedule of tries is the delivery's own (moveToDelayed); these attempts cover only an
  // unexpected error of the step itself (a full disk), and the sweep re-adds what is still pending.
  attempts: 5,
  backoff: { type: 'exponential', delay: 5_000 },
  removeOnComplete: true,
  removeOnFail: { age: 7 * DAY_S, count: 10_000 },
};

/** What the API routes and the evaluation need of a sender: the outbox (start) or this queue (worker tier). */
export interface Deliveries {
  enqueue(tenantId: string, endpoint: StoredEndpoint, event: OutgoingEvent): Promise<Delivery>;
  list(tenantId: string, endpointId: string): Promise<Delivery[]>;
  redeliver(tenantId: string, endpointId: string, deliveryId: string): Promise<Delivery | null>;
  start(): void;
  stop(): Promise<void>;
}

/** The queue's side that adds jobs (API processes and workers). */
export class WebhookQueue implements Deliveries {
  readonly book: WebhookOutbox;

  constructor(
    layout: WarehouseLayout,
    opts: OutboxOptions,
    readonly queue: Queue,
    log: Logger,
  ) {
    // Never started: its scan is not used, only its records and its one step.
    this.book = new WebhookOutbox(layout, { ...opts, via: 'queue' }, log);
  }

  /** Open the queue on a connection (BullMQ's prefix as the other queues'). */
  static open(layout: WarehouseLayout, opts: OutboxOptions, connection: Redis, prefix: string, log: Logger): WebhookQueue {
    const queue = new Queue(WEBHOOK_QUEUE, { connection, prefix });
    queue.on('error', () => {}); // connection trouble is logged by the client
    return new WebhookQueue(layout, opts, queue, log);
  }

  async enqueue(tenantId: string, endpoint: StoredEndpoint, event: OutgoingEvent): Promise<Delivery> {
    const d = await this.book.enqueue(tenantId, endpoint, event);
    if (d.state === 'pending') await this.add(d);
    return d;
  }

  list(tenantId: string, endpointId: string): Promise<Delivery[]> {
    return this.book.list(tenantId, endpointId);
  }

  async redeliver(tenantId: string, endpointId: string, deliveryId: string): Promise<Delivery | null> {
    const d = await this.book.redeliver(tenantId, endpointId, deliveryId);
    // A job of its own: the delivery's first one may be finished and kept (or still delayed: then two look at it; the record decides).
    if (d) await this.add(d, `r${randomBytes(4).toString('hex')}`);
    return d;
  }

  /** The job of a pending delivery, added once (by the delivery's id). */
  async add(d: Pick<Delivery, 'id' | 'tenantId' | 'endpointId'>, round?: string): Promise<void> {
    const data: DeliveryJob = { tenantId: d.tenantId, endpointId: d.endpointId, deliveryId: d.id };
    await this.queue.add(JOB, data, { ...JOB_OPTIONS, jobId: round ? `${d.id}-${round}` : d.id });
  }

  start(): void {}

  async stop(): Promise<void> {
    await this.queue.close();
  }
}

/** Release a lock only if it is still ours. */
const UNLOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

export interface DeliveryWorkerOptions {
  connection: Redis;
  prefix: string;
  concurrency: number;
  /** Longest attempt (WEBHOOK_TIMEOUT_SECONDS): an endpoint's lock outlives it. */
  timeoutMs: number;
  workerName: string;
  /** BullMQ's job lock and stalled-job check, as the other queues' (WORKER_LOCK_DURATION_MS…): a worker killed mid-attempt has its job retaken. */
  lock: { lockDuration: number; stalledInterval: number; maxStalledCount: number };
}

/** The worker of the `webhooks` queue: each job one step of its delivery's endpoint. */
export function startDeliveryWorker(q: WebhookQueue, opts: DeliveryWorkerOptions, log: Logger): Worker {
  const lockKey = (endpointId: string) => `${opts.prefix}:webhook-endpoint:${endpointId}`;
  const stepJob = async (job: Job, token?: string) => {
    const { tenantId, endpointId, deliveryId } = DeliveryJob.parse(job.data);
    const me = `${opts.workerName}:${job.id}`;
    const locked = await opts.connection.set(lockKey(endpointId), me, 'PX', opts.timeoutMs + 15_000, 'NX');
    let wakeAt: number | null;
    if (locked !== 'OK') wakeAt = Date.now() + BUSY_WAIT_MS + Math.floor(Math.random() * 500);
    else {
      try {
        const pending = await q.book.step(tenantId, endpointId);
        wakeAt = wakeTime(pending, deliveryId);
      } finally {
        await opts.connection.eval(UNLOCK, 1, lockKey(endpointId), me).catch(() => {});
      }
    }
    if (wakeAt === null) return 'done';
    await job.moveToDelayed(Math.max(wakeAt, Date.now() + 50), token);
    throw new DelayedError();
  };
  const w = new Worker(WEBHOOK_QUEUE, stepJob, { connection: opts.connection, prefix: opts.prefix, name: opts.workerName, concurrency: opts.concurrency, ...opts.lock });
  let lastLogged = 0;
  w.on('error', (err) => {
    if (Date.now() - lastLogged < 10_000) return;
    lastLogged = Date.now();
    log.error({ queue: WEBHOOK_QUEUE, err: err.message }, 'worker error');
  });
  w.on('failed', (job, err) => job && err.name !== 'DelayedError' && log.warn({ queue: WEBHOOK_QUEUE, jobId: job.id, err: err.message }, 'delivery step failed'));
  return w;
}

/**
 * When the job of `deliveryId` looks again: null once it is delivered or failed; otherwise when
 * the endpoint's oldest pending delivery (which it waits behind, or is) is next due.
 */
function wakeTime(pending: readonly Delivery[], deliveryId: string): number | null {
  if (!pending.some((d) => d.id === deliveryId)) return null;
  const head = pending[0]!;
  return head.nextAttemptAt === null ? Date.now() : Date.parse(head.nextAttemptAt);
}
