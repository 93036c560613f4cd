// Alerts on the worker tier: the worker whose publish job made a snapshot evaluates every rule on
// it (the snapshot loaded as the API loads it, the same evaluation as `start`'s) and puts the
// events in the `webhooks` queue, inside that job: a worker killed between evaluation and
// delivery leaves the job to be retried, and the retry (which finds the snapshot published)
// evaluates again, changing nothing (idempotent per rule and snapshot), and enqueues what was
// not. A sweep puts back what the queue lacks: pending deliveries whose jobs Redis lost (a
// restart without persistence) and events not yet enqueued.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../warehouse/duckdb/index.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import type { Logger } from '../lib/log.ts';
import { exists } from '../lib/fsx.ts';
import { loadSnapshot } from '../served/snapshot-store.ts';
import { ResponseCache } from '../served/response-cache.ts';
import { evaluateSnapshot, type Evaluation } from './evaluate.ts';
import { enqueueAllEvents } from './notify.ts';
import { webhooksDir } from './webhooks/endpoints-store.ts';
import type { WebhookQueue } from './webhooks/delivery-queue.ts';

/** Memory of the small response cache a loaded snapshot needs (the evaluation reads no cached body). */
const CACHE_BYTES = 8 * 2 ** 20;

export class WorkerAlerts {
  private timer: NodeJS.Timeout | null = null;
  /** Enqueueing of events runs one at a time in this process (the publish job's and the sweep's). */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: { db: Db; layout: WarehouseLayout },
    readonly deliveries: WebhookQueue,
    private readonly log: Logger,
    private readonly sweepMs: number,
    /** Called after an evaluation, before its events are enqueued (the crash tests stop there). */
    private readonly onEvaluated: (e: Evaluation) => Promise<void> | void = () => {},
  ) {}

  /** Evaluate the published snapshot and enqueue its events. */
  async afterPublish(snapshot: string, log: Logger = this.log): Promise<Evaluation> {
    const snap = await loadSnapshot(this.deps.db, this.deps.layout, snapshot, new ResponseCache(CACHE_BYTES));
    const e = await evaluateSnapshot({ db: this.deps.db, layout: this.deps.layout, log }, snap);
    log.info({ snapshot, rules: e.rules, questions: e.questions, opened: e.opened, resolved: e.resolved, firing: e.firing, ms: Math.round(e.ms) }, 'alerts evaluated');
    await this.onEvaluated(e);
    await this.enqueueEvents();
    return e;
  }

  private enqueueEvents(): Promise<number> {
    const run = this.chain.then(() => enqueueAllEvents(this.deps.layout, this.deliveries));
    this.chain = run.catch(() => {});
    return run;
  }

  /** Re-add the job of every pending delivery of the queue's lane, and enqueue waiting events. */
  async sweep(): Promise<{ events: number; pending: number }> {
    const events = await this.enqueueEvents();
    let pending = 0;
    const root = path.join(webhooksDir(this.deps.layout), 'outbox');
    if (!(await exists(root))) return { events, pending };
    for (const tenantId of await fs.readdir(root)) {
      for (const endpointId of await fs.readdir(path.join(root, tenantId)).catch(() => [])) {
        for (const d of await this.deliveries.book.pending(tenantId, endpointId)) {
          await this.deliveries.add(d);
          pending++;
        }
      }
    }
    return { events, pending };
  }

  start(): void {
    let sweeping = false;
    const run = () => {
      if (sweeping) return;
      sweeping = true;
      this.sweep().finally(() => (sweeping = false)).catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'webhook sweep failed; the next one tries again'));
    };
    this.timer = setInterval(run, this.sweepMs);
    this.timer.unref();
    run();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.chain;
  }
}
