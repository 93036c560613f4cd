// Each tenant's evaluation state and incidents, in control/alerts/<tenantId>.state.json: one small
// document, changed under its lock, so that a snapshot evaluated twice (two workers, a replay, a
// crash between evaluation and delivery) changes it once (transitions.ts decides, per rule, by
// the snapshot's asOf).
import path from 'node:path';
import { z } from 'zod';
import { isoInstant } from '../lib/json-schema.ts';
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

/**
 * Change the state document under its lock: `change` returns the next document and a result. It
 * gets the document readState gives while the file is unchanged (the same object), which it must
 * not modify.
 */
export function updateState<R>(layout: WarehouseLayout, tenantId: string, change: (doc: Readonly<StateDoc>) => { next: StateDoc; result: R }): Promise<R> {
  return updateDocument(
    stateFile(layout, tenantId),
    StateDocSchema,
    EMPTY,
    (doc) => {
      const { next, result } = change(doc);
      return { next: { ...next, incidents: pruned(next.incidents) }, result };
    },
    { shared: true },
  );
}

/** The newest snapshot whose evaluation completed (control/alerts/evaluated.json). */
const EvaluatedSchema = z.object({ asOf: isoInstant().nullable(), snapshot: z.string().nullable() });
const NOTHING_EVALUATED: z.infer<typeof EvaluatedSchema> = { asOf: null, snapshot: null };

const evaluatedFile = (layout: WarehouseLayout) => path.join(alertsDir(layout), 'evaluated.json');

/**
 * Run the state changes of a snapshot's evaluation alone among evaluations (in every process:
 * under the lock of evaluated.json), `work` given the asOf of the newest snapshot whose evaluation
 * completed (-Infinity: none); once it completes, this snapshot's asOf is recorded if it is newer.
 * An evaluation that throws records nothing: its retry steps what it had not written.
 */
export function settleEvaluation<R>(layout: WarehouseLayout, snap: { id: string; asOfMs: number }, work: (settledMs: number) => Promise<R>): Promise<R> {
  return updateDocument(evaluatedFile(layout), EvaluatedSchema, NOTHING_EVALUATED, async (doc) => {
    const settledMs = doc.asOf === null ? Number.NEGATIVE_INFINITY : Date.parse(doc.asOf);
    const result = await work(settledMs);
    return { next: settledMs >= snap.asOfMs ? doc : { asOf: new Date(snap.asOfMs).toISOString(), snapshot: snap.id }, result };
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
