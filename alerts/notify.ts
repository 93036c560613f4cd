// From incidents to deliveries: every event of a tenant's incidents not yet in the outbox is put
// there for each endpoint that takes its type (the outbox keeps one delivery per event and
// endpoint, so doing this twice sends nothing twice), then marked enqueued. Run after each
// evaluation and at start, so an event made just before a crash is delivered after it.
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { listTenants } from '../control/tenants.ts';
import { publicIncident, readState, updateState } from './state-store.ts';
import { listEndpoints } from './webhooks/endpoints-store.ts';
import type { OutgoingEvent } from './webhooks/outbox.ts';
import type { Deliveries } from './webhooks/delivery-queue.ts';
import type { StoredIncident } from './incident-schema.ts';

/** The event body's data: the incident, its rule, and where to read them. */
export function incidentData(incident: StoredIncident) {
  const { rule, ...rest } = publicIncident(incident);
  return {
    incident: rest,
    rule,
    links: { api: `/control/alerts/${rule.id}/incidents`, incidents: '/control/incidents?state=open', portal: `/portal/alerts/${rule.id}` },
  };
}

/** Enqueue the tenant's events that are not yet enqueued; returns how many events were. */
export async function enqueueEvents(layout: WarehouseLayout, tenantId: string, outbox: Pick<Deliveries, 'enqueue'>): Promise<number> {
  const waiting = (await readState(layout, tenantId)).incidents.flatMap((i) => i.events.filter((e) => !e.enqueued).map((e) => ({ incident: i, event: e })));
  if (waiting.length === 0) return 0;
  const endpoints = (await listEndpoints(layout, tenantId)).filter((e) => e.disabled === null);
  for (const { incident, event } of waiting) {
    const out: OutgoingEvent = { id: event.id, type: event.type, timestamp: event.timestamp, data: incidentData(incident) };
    for (const e of endpoints.filter((x) => x.events.includes(event.type))) await outbox.enqueue(tenantId, e, out);
  }
  const done = new Set(waiting.map((w) => w.event.id));
  await updateState(layout, tenantId, (doc) => ({
    next: { ...doc, incidents: doc.incidents.map((i) => ({ ...i, events: i.events.map((e) => (done.has(e.id) ? { ...e, enqueued: true } : e)) })) },
    result: null,
  }));
  return waiting.length;
}

/** enqueueEvents for every tenant. */
export async function enqueueAllEvents(layout: WarehouseLayout, outbox: Pick<Deliveries, 'enqueue'>): Promise<number> {
  let n = 0;
  for (const t of await listTenants(layout)) n += await enqueueEvents(layout, t.id, outbox);
  return n;
}
