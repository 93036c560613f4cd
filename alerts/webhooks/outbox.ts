// The outbox of `start` (no Redis): every delivery a file under control/webhooks/outbox/<tenant>/
// <endpoint>/, written durably before anything is sent, so a restart delivers what was pending
// with the same webhook-id. Each endpoint has one attempt in flight at a time, oldest first (in
// order where possible); endpoints never wait for each other, so a slow receiver delays only its
// own deliveries, and nothing here runs on the rollups' path. The worker tier keeps the same
// records (`via: 'queue'`) and steps them from its BullMQ queue instead (delivery-queue.ts); each
// sender attempts only the deliveries of its own lane.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { WarehouseLayout } from '../../warehouse/layout.ts';
import type { Logger } from '../../lib/log.ts';
import { exists } from '../../lib/fsx.ts';
import { stableId } from '../evaluate.ts';
import { alertMetrics } from '../metrics.ts';
import { changeEndpoint, listEndpoints, signingSecrets, webhooksDir } from './endpoints-store.ts';
import { readDelivery, retryDelayMs, writeDelivery, type Delivery } from './delivery-record.ts';
import { signatures } from './signature.ts';
import { sendOnce } from './send.ts';
import type { StoredEndpoint } from './endpoint-schema.ts';
import type { EventType } from '../incident-schema.ts';

/** Finished deliveries kept per endpoint (pending ones always). */
export const KEPT_DELIVERIES = 200;
const SCAN_MS = 500;

export interface OutboxOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  retryForMs: number;
  /** The lane this sender owns (default `outbox`); deliveries of the other lane are left alone. */
  via?: Lane;
}

export type Lane = NonNullable<Delivery['via']>;
const laneOf = (d: Delivery): Lane => d.via ?? 'outbox';

export interface OutgoingEvent {
  id: string;
  type: EventType;
  timestamp: string;
  data: unknown;
}

export class WebhookOutbox {
  private timer: NodeJS.Timeout | null = null;
  private readonly busy = new Map<string, Promise<void>>();

  constructor(
    private readonly layout: WarehouseLayout,
    private readonly opts: OutboxOptions,
    private readonly log: Logger,
  ) {}

  private dir(tenantId: string, endpointId: string): string {
    return path.join(webhooksDir(this.layout), 'outbox', tenantId, endpointId);
  }

  /** Put an event in the endpoint's outbox once (by the pair's stable id); returns the delivery. */
  async enqueue(tenantId: string, endpoint: StoredEndpoint, event: OutgoingEvent): Promise<Delivery> {
    const dir = this.dir(tenantId, endpoint.id);
    const id = stableId('dlv', endpoint.id, event.id);
    const known = await readDelivery(path.join(dir, `${id}.json`));
    if (known) return known;
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    const now = new Date().toISOString();
    const body = JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
    const d: Delivery = { id, endpointId: endpoint.id, tenantId, eventId: event.id, type: event.type, body, createdAt: now, state: 'pending', attempts: [], nextAttemptAt: now, failure: null, ...this.laneField() };
    await writeDelivery(dir, d);
    this.kick();
    return d;
  }

  /** Every delivery of an endpoint, newest first. */
  async list(tenantId: string, endpointId: string): Promise<Delivery[]> {
    const dir = this.dir(tenantId, endpointId);
    if (!(await exists(dir))) return [];
    const all = await Promise.all((await fs.readdir(dir)).filter((f) => f.endsWith('.json')).map((f) => readDelivery(path.join(dir, f))));
    return all.filter((d): d is Delivery => d !== null).sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  /** Send a delivery again by hand (same webhook-id, same body); null when there is none. */
  async redeliver(tenantId: string, endpointId: string, deliveryId: string): Promise<Delivery | null> {
    const dir = this.dir(tenantId, endpointId);
    const d = await readDelivery(path.join(dir, `${path.basename(deliveryId)}.json`));
    if (!d) return null;
    const again: Delivery = { ...d, ...this.laneField(), state: 'pending', nextAttemptAt: new Date().toISOString(), failure: null, createdAt: d.state === 'pending' ? d.createdAt : new Date().toISOString() };
    await writeDelivery(dir, again);
    this.kick();
    return again;
  }

  private laneField(): Pick<Delivery, 'via'> {
    return this.opts.via === 'queue' ? { via: 'queue' } : {};
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), SCAN_MS);
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.allSettled([...this.busy.values()]);
  }

  /** Start an attempt on every endpoint that has a due delivery and none in flight (once started). */
  kick(): void {
    if (!this.timer) return; // not started: another sender (the worker tier's queue) steps these records
    void this.scan().catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'webhook outbox scan failed'));
  }

  private async scan(): Promise<void> {
    const root = path.join(webhooksDir(this.layout), 'outbox');
    if (!(await exists(root))) return;
    for (const tenantId of await fs.readdir(root)) {
      for (const endpointId of await fs.readdir(path.join(root, tenantId)).catch(() => [])) {
        const key = `${tenantId}/${endpointId}`;
        if (this.busy.has(key)) continue;
        const run = this.next(tenantId, endpointId).finally(() => this.busy.delete(key));
        this.busy.set(key, run);
      }
    }
  }

  private async next(tenantId: string, endpointId: string): Promise<void> {
    if ((await this.step(tenantId, endpointId)).length > 0) this.kick();
  }

  /** The endpoint's pending deliveries of this lane, oldest first. */
  async pending(tenantId: string, endpointId: string): Promise<Delivery[]> {
    return (await this.list(tenantId, endpointId)).filter((d) => d.state === 'pending' && laneOf(d) === (this.opts.via ?? 'outbox')).reverse();
  }

  /**
   * The endpoint's oldest pending delivery of this lane, attempted when due (a later one waits
   * behind it); the caller makes sure that one attempt at a time runs per endpoint. Returns what
   * is still pending after it, oldest first.
   */
  async step(tenantId: string, endpointId: string): Promise<Delivery[]> {
    const pending = await this.pending(tenantId, endpointId);
    const d = pending[0];
    if (!d || (d.nextAttemptAt !== null && Date.parse(d.nextAttemptAt) > Date.now())) return pending;
    const endpoint = (await listEndpoints(this.layout, tenantId)).find((e) => e.id === endpointId);
    const dir = this.dir(tenantId, endpointId);
    if (!endpoint || endpoint.disabled) {
      await writeDelivery(dir, { ...d, state: 'failed', nextAttemptAt: null, failure: endpoint ? `endpoint disabled: ${endpoint.disabled!.reason}` : 'endpoint removed' });
      return pending.slice(1);
    }
    const after = await this.attempt(tenantId, endpoint, d);
    await writeDelivery(dir, after);
    await this.prune(tenantId, endpointId);
    return after.state === 'pending' ? [after, ...pending.slice(1)] : pending.slice(1);
  }

  private async attempt(tenantId: string, endpoint: StoredEndpoint, d: Delivery): Promise<Delivery> {
    const ts = Math.floor(Date.now() / 1000);
    const headers = { 'webhook-id': d.eventId, 'webhook-timestamp': String(ts), 'webhook-signature': signatures(signingSecrets(endpoint), d.eventId, ts, d.body) };
    const a = await sendOnce({ url: endpoint.url, headers, body: d.body }, this.opts);
    const attempts = [...d.attempts, a];
    const ok = a.status !== null && a.status >= 200 && a.status < 300;
    alertMetrics.deliveries.inc({ outcome: ok ? 'delivered' : a.status === null ? 'no_answer' : `http_${Math.floor(a.status / 100)}xx` });
    await this.recordOutcome(tenantId, endpoint, ok, a.status === 410);
    if (ok) return { ...d, attempts, state: 'delivered', nextAttemptAt: null, failure: null };
    if (a.status === 410) return { ...d, attempts, state: 'failed', nextAttemptAt: null, failure: 'the endpoint answered 410 Gone: disabled' };
    if (Date.now() - Date.parse(d.createdAt) >= this.opts.retryForMs) return { ...d, attempts, state: 'failed', nextAttemptAt: null, failure: `no success within ${this.opts.retryForMs / 3_600_000} h` };
    const next = new Date(Date.now() + retryDelayMs(attempts.length, a.retryAfterSeconds)).toISOString();
    this.log.info({ endpointId: endpoint.id, deliveryId: d.id, status: a.status, error: a.error, next }, 'webhook delivery failed; retrying');
    return { ...d, attempts, nextAttemptAt: next };
  }

  /** An endpoint's record after an attempt: failing since when, disabled by 410 or a day of failures. */
  private async recordOutcome(tenantId: string, endpoint: StoredEndpoint, ok: boolean, gone: boolean): Promise<void> {
    if (ok && endpoint.failingSince === null) return;
    await changeEndpoint(this.layout, tenantId, endpoint.id, (e) => {
      if (ok) return { ...e, failingSince: null };
      const now = new Date().toISOString();
      const failingSince = e.failingSince ?? now;
      if (gone) return { ...e, failingSince, disabled: { at: now, reason: 'answered 410 Gone' } };
      if (Date.now() - Date.parse(failingSince) >= this.opts.retryForMs) return { ...e, failingSince, disabled: { at: now, reason: `every delivery failed for ${this.opts.retryForMs / 3_600_000} h` } };
      return { ...e, failingSince };
    });
  }

  private async prune(tenantId: string, endpointId: string): Promise<void> {
    const done = (await this.list(tenantId, endpointId)).filter((d) => d.state !== 'pending');
    for (const d of done.slice(KEPT_DELIVERIES)) await fs.rm(path.join(this.dir(tenantId, endpointId), `${d.id}.json`), { force: true });
  }
}
