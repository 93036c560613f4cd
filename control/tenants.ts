// Tenants and their billing rates (docs/api.md, "Tenants, rates and configuration"), kept in
// control/tenants.json so that the API, the job workers and the CLI all read the same list.
import fs from 'node:fs/promises';
import { originsFile } from './origins.ts';
import path from 'node:path';
import { ulid } from 'ulid';
import { z } from 'zod';
import { CUSTOMER_ID_PATTERN } from '../warehouse/ids.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { readDocumentCached, updateDocument } from './documents.ts';
import { InternalError } from '../lib/errors.ts';

export const TENANT_ID_PATTERN = /^t_[0-9A-HJKMNP-TV-Z]{26}$/;

export const TenantSchema = z.object({
  id: z.string().regex(TENANT_ID_PATTERN),
  customerId: z.string().regex(CUSTOMER_ID_PATTERN),
  name: z.string().min(1).max(200),
  /** USD per GB of CDN egress; null when no rate is on file (the platform default applies). */
  cdnPricePerGb: z.number().nonnegative().nullable(),
  /** Percentage of the avoided CDN cost charged as the service fee. */
  savingsSharePct: z.number().min(0).max(100),
  createdAt: z.string(),
});
export type Tenant = z.infer<typeof TenantSchema>;

const TenantsDocSchema = z
  .object({ version: z.literal(1), tenants: z.array(TenantSchema) })
  .refine((d) => new Set(d.tenants.map((t) => t.customerId)).size === d.tenants.length, 'two tenants share a customerId');
type TenantsDoc = z.infer<typeof TenantsDocSchema>;
const EMPTY: TenantsDoc = { version: 1, tenants: [] };

export class TenantError extends InternalError {
  override name = 'TenantError';
  override readonly errorCode = 'tenant_refused';
}

export function tenantsFile(layout: WarehouseLayout): string {
  return path.join(layout.control, 'tenants.json');
}

/** Every tenant, in creation order. Shared with other readers of this process: do not modify. */
export async function listTenants(layout: WarehouseLayout): Promise<readonly Tenant[]> {
  return (await readDocumentCached(tenantsFile(layout), TenantsDocSchema, EMPTY)).tenants;
}

/** A tenant by its id (t_…) or its customerId; null when unknown. */
export async function findTenant(layout: WarehouseLayout, idOrCustomer: string): Promise<Tenant | null> {
  return (await listTenants(layout)).find((t) => t.id === idOrCustomer || t.customerId === idOrCustomer) ?? null;
}

export interface NewTenant {
  customerId: string;
  name: string;
  cdnPricePerGb: number | null;
  savingsSharePct: number;
}

export async function addTenant(layout: WarehouseLayout, input: NewTenant): Promise<Tenant> {
  return updateDocument(tenantsFile(layout), TenantsDocSchema, EMPTY, (doc) => {
    if (doc.tenants.some((t) => t.customerId === input.customerId)) {
      throw new TenantError(`a tenant for customer ${input.customerId} exists already`);
    }
    const tenant = TenantSchema.parse({ id: `t_${ulid()}`, ...input, createdAt: new Date().toISOString() });
    return { next: { ...doc, tenants: [...doc.tenants, tenant] }, result: tenant };
  });
}

/**
 * Remove a tenant (by id or customerId) and its origins list; returns it, or null when unknown.
 * Its tokens and keys are refused from then on by every process (revocation.ts), within seconds.
 */
export async function removeTenant(layout: WarehouseLayout, idOrCustomer: string): Promise<Tenant | null> {
  const removed = await updateDocument(tenantsFile(layout), TenantsDocSchema, EMPTY, (doc) => {
    const tenant = doc.tenants.find((t) => t.id === idOrCustomer || t.customerId === idOrCustomer) ?? null;
    return { next: tenant ? { ...doc, tenants: doc.tenants.filter((t) => t !== tenant) } : doc, result: tenant };
  });
  if (removed) await fs.rm(originsFile(layout, removed.id), { force: true });
  return removed;
}
