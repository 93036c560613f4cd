// Each tenant's allowlist of content origins, in control/origins/<tenantId>.json: durable, replaced
// whole and atomically (after a crash the old list or the new one, never a mix), serialised across
// processes, with a version for optimistic concurrency (ETag / If-Match).
import path from 'node:path';
import { z } from 'zod';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { readDocument, updateDocument } from './documents.ts';
import { MAX_ORIGINS, normaliseOrigin } from '../lib/origin-rules.ts';
import { InternalError } from '../lib/errors.ts';

const OriginsDocSchema = z.object({
  version: z.number().int().nonnegative(),
  origins: z
    .array(z.string())
    .max(MAX_ORIGINS)
    // What is stored is already normalised: reading it back checks that nobody edited it wrong.
    .refine((list) => list.every((o) => { const r = normaliseOrigin(o); return r.ok && r.origin === o; }), 'an entry is not a normalised origin'),
  updatedAt: z.string().nullable(),
});
export type StoredOrigins = z.infer<typeof OriginsDocSchema>;

const EMPTY: StoredOrigins = { version: 0, origins: [], updatedAt: null };

export class VersionMismatch extends InternalError {
  override name = 'VersionMismatch';
  override readonly errorCode = 'origins_version_mismatch';
  constructor(readonly current: StoredOrigins) {
    super('the stored list changed since it was read');
  }
}

export function originsFile(layout: WarehouseLayout, tenantId: string): string {
  return path.join(layout.control, 'origins', `${tenantId}.json`);
}

export function readOrigins(layout: WarehouseLayout, tenantId: string): Promise<StoredOrigins> {
  return readDocument(originsFile(layout, tenantId), OriginsDocSchema, EMPTY);
}

/**
 * Replace a tenant's list with `origins` (already validated and normalised). With `expectedVersion`,
 * the write happens only if the stored version is still that one.
 */
export function replaceOrigins(layout: WarehouseLayout, tenantId: string, origins: string[], expectedVersion?: number): Promise<StoredOrigins> {
  return updateDocument(originsFile(layout, tenantId), OriginsDocSchema, EMPTY, (current) => {
    if (expectedVersion !== undefined && current.version !== expectedVersion) throw new VersionMismatch(current);
    const next: StoredOrigins = { version: current.version + 1, origins, updatedAt: new Date().toISOString() };
    return { next, result: next };
  });
}

/** What signing enforces: the tenant's list, or the platform default when it is empty. */
export function effectiveAllowlist(stored: StoredOrigins, platformDefault: readonly string[]): readonly string[] {
  return stored.origins.length > 0 ? stored.origins : platformDefault;
}
