// A tenant's webhook endpoints, in control/webhooks/<tenantId>.json (mode 0600: it holds signing
// secrets): a small control document, replaced atomically under its lock.
import path from 'node:path';
import { z } from 'zod';
import type { WarehouseLayout } from '../../warehouse/layout.ts';
import { readDocumentCached, updateDocument } from '../../control/documents.ts';
import { newId } from '../rules-store.ts';
import { newSecret } from './signature.ts';
import { StoredEndpointSchema, type StoredEndpoint } from './endpoint-schema.ts';
import type { EventType } from '../incident-schema.ts';

const DocSchema = z.object({ endpoints: z.array(StoredEndpointSchema) });
type Doc = z.infer<typeof DocSchema>;
const EMPTY: Doc = { endpoints: [] };

export class EndpointLimitReached extends Error {
  override name = 'EndpointLimitReached';
}

export const webhooksDir = (layout: WarehouseLayout) => path.join(layout.control, 'webhooks');
const file = (layout: WarehouseLayout, tenantId: string) => path.join(webhooksDir(layout), `${tenantId}.json`);

export async function listEndpoints(layout: WarehouseLayout, tenantId: string): Promise<readonly StoredEndpoint[]> {
  return (await readDocumentCached(file(layout, tenantId), DocSchema, EMPTY)).endpoints;
}

export function addEndpoint(layout: WarehouseLayout, tenantId: string, input: { url: string; events: EventType[] }, max: number): Promise<StoredEndpoint> {
  return updateDocument(file(layout, tenantId), DocSchema, EMPTY, (doc) => {
    if (doc.endpoints.length >= max) throw new EndpointLimitReached(`at most ${max} endpoints`);
    const now = new Date().toISOString();
    const e: StoredEndpoint = { id: newId('whk'), ...input, secrets: [{ secret: newSecret(), createdAt: now, notAfter: null }], createdAt: now, failingSince: null, disabled: null };
    return { next: { endpoints: [...doc.endpoints, e] }, result: e };
  });
}

/** Change endpoint `id` (null: none such); `change` returns the new record. */
export function changeEndpoint(layout: WarehouseLayout, tenantId: string, id: string, change: (e: StoredEndpoint) => StoredEndpoint): Promise<StoredEndpoint | null> {
  return updateDocument(file(layout, tenantId), DocSchema, EMPTY, (doc) => {
    const e = doc.endpoints.find((x) => x.id === id);
    if (!e) return { next: doc, result: null };
    const next = change(e);
    return { next: { endpoints: doc.endpoints.map((x) => (x.id === id ? next : x)) }, result: next };
  });
}

export function removeEndpoint(layout: WarehouseLayout, tenantId: string, id: string): Promise<boolean> {
  return updateDocument(file(layout, tenantId), DocSchema, EMPTY, (doc) => {
    const endpoints = doc.endpoints.filter((x) => x.id !== id);
    return { next: { endpoints }, result: endpoints.length !== doc.endpoints.length };
  });
}

/** A new secret first; the others sign until `graceMs` from now (those past their time are dropped). */
export function rotated(e: StoredEndpoint, graceMs: number, now = Date.now()): StoredEndpoint {
  const until = new Date(now + graceMs).toISOString();
  const kept = e.secrets.filter((s) => s.notAfter === null || Date.parse(s.notAfter) > now).map((s) => ({ ...s, notAfter: s.notAfter ?? until }));
  return { ...e, secrets: [{ secret: newSecret(), createdAt: new Date(now).toISOString(), notAfter: null }, ...kept] };
}

/** The secrets that sign now. */
export const signingSecrets = (e: StoredEndpoint, now = Date.now()) => e.secrets.filter((s) => s.notAfter === null || Date.parse(s.notAfter) > now).map((s) => s.secret);
