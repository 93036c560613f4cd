// Each tenant's evaluation state and incidents, in control/alerts/<tenantId>.state.json: one small
// document, changed under its lock, so that a snapshot evaluated twice (two workers, a replay, a
// crash between evaluation and delivery) changes it once (transitions.ts decides, per rule, by
// the snapshot's asOf).
import path from 'node:path';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { readDocumentCached, updateDocument } from '../control/documents.ts';
import { alertsDir } from './rules-store.ts';
import { StateDocSchema, type Incident, type StateDoc, type StoredIncident } from './incident-schema.ts';

const EMPTY: StateDoc = { runs: {}, incidents: [] };

/** Resolved incidents kept per tenant (open ones are always kept). */
export const KEPT_RESOLVED_INCIDENTS = 500;

const stateFile = (layout: WarehouseLayout, tenantId: string) => path.join(alertsDir(layout), `${tenantId}.state.json`);

export function readState(layout: WarehouseLayout, tenantId: string): Promise<Readonly<StateDoc>> {
  return readDocumentCached(stateFile(layout, tenantId), StateDocSchema, EMPTY);
}

/** Change the state document under its lock: `change` returns the next document and a result. */
export function updateState<R>(layout: WarehouseLayout, tenantId: string, change: (doc: StateDoc) => { next: StateDoc; result: R }): Promise<R> {
  return updateDocument(stateFile(layout, tenantId), StateDocSchema, EMPTY, (doc) => {
    const { next, result } = change(doc);
    return { next: { ...next, incidents: pruned(next.incidents) }, result };
  });
}

/** The open incidents and the newest resolved ones, oldest first. */
function pruned(incidents: StoredIncident[]): StoredIncident[] {
  const resolved = incidents.filter((i) => i.state === 'resolved');
  if (resolved.length <= KEPT_RESOLVED_INCIDENTS) return incidents;
  const drop = new Set(resolved.slice(0, resolved.length - KEPT_RESOLVED_INCIDENTS).map((i) => i.id));
  return incidents.filter((i) => !drop.has(i.id));
}

/** An incident as the API serves it (without its events' bookkeeping). */
export function publicIncident({ events: _e, ...incident }: StoredIncident): Incident {
  return incident;
}
