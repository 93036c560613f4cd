// Revocation (control/revoked.json and the tenant list): which credentials every process refuses.
// A token is refused when its id (jti) is on the deny list, kept until the token would have
// expired, or when its customer has no tenant any more (`tenants remove`). Every API and collector
// process re-reads both documents every few seconds (one stat each while they are unchanged), so a
// revocation takes effect everywhere without a restart.
import path from 'node:path';
import { z } from 'zod';
import type { Logger } from '../lib/log.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { readDocumentCached, updateDocument } from './documents.ts';
import { listTenants } from './tenants.ts';

const RevokedDocSchema = z.object({
  version: z.literal(1),
  tokens: z.array(
    z.object({
      jti: z.string().min(1).max(200),
      /** Unix seconds: past it the token is refused as expired anyway, and the entry is pruned. */
      expiresAt: z.number().int(),
      revokedAt: z.string(),
    }),
  ),
});
type RevokedDoc = z.infer<typeof RevokedDocSchema>;
const EMPTY: RevokedDoc = { version: 1, tokens: [] };

export function revokedFile(layout: WarehouseLayout): string {
  return path.join(layout.control, 'revoked.json');
}

/**
 * Put a token id on the deny list until `expiresAt` (unix seconds); entries of tokens that have
 * expired since are dropped on the way. Says whether it was listed already.
 */
export function revokeTokenId(layout: WarehouseLayout, jti: string, expiresAt: number, now = Math.floor(Date.now() / 1000)): Promise<{ already: boolean }> {
  return updateDocument(revokedFile(layout), RevokedDocSchema, EMPTY, (doc) => {
    const live = doc.tokens.filter((t) => t.expiresAt > now);
    const existing = live.find((t) => t.jti === jti);
    if (existing) existing.expiresAt = Math.max(existing.expiresAt, expiresAt);
    else live.push({ jti, expiresAt, revokedAt: new Date(now * 1000).toISOString() });
    return { next: { version: 1 as const, tokens: live }, result: { already: existing !== undefined } };
  });
}

/** What revocation knows at one moment: revoked token ids, and each customer's tenant id. */
export interface RevocationState {
  revokedIds: ReadonlySet<string>;
  tenantOfCustomer: ReadonlyMap<string, string>;
}

/** A credential as any process sees it: an API token (with its tenant and id) or an ingest key (customer only). */
export interface Credential {
  customerId?: string | undefined;
  tenantId?: string | undefined;
  tokenId?: string | undefined;
}

export type Refusal = 'revoked' | 'tenant_removed';

/**
 * The one rule: a revoked token id is refused, and so is a credential of a customer with no tenant
 * (or, for a token, of a tenant that was removed and created again: another tenant id).
 */
export function credentialRefusal(state: RevocationState, cred: Credential): Refusal | null {
  if (cred.tokenId !== undefined && state.revokedIds.has(cred.tokenId)) return 'revoked';
  if (cred.customerId !== undefined) {
    const tenantId = state.tenantOfCustomer.get(cred.customerId);
    if (tenantId === undefined) return 'tenant_removed';
    if (cred.tenantId !== undefined && cred.tenantId !== tenantId) return 'tenant_removed';
  }
  return null;
}

/** Read both documents now. */
export async function readRevocationState(layout: WarehouseLayout): Promise<RevocationState> {
  const [revoked, tenants] = await Promise.all([readDocumentCached(revokedFile(layout), RevokedDocSchema, EMPTY), listTenants(layout)]);
  const now = Date.now() / 1000;
  return {
    revokedIds: new Set(revoked.tokens.filter((t) => t.expiresAt > now).map((t) => t.jti)),
    tenantOfCustomer: new Map(tenants.map((t) => [t.customerId, t.id])),
  };
}

/**
 * The state of a process, refreshed every `pollMs`: checks on a request are synchronous set
 * lookups. A document that cannot be read keeps the last good state (and is logged); at start it
 * fails, so that a process never serves without knowing what is revoked.
 */
export class Revocation {
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;

  private constructor(
    private readonly layout: WarehouseLayout,
    private state: RevocationState,
    private readonly log: Logger | null,
  ) {}

  static async start(layout: WarehouseLayout, pollMs: number, log: Logger | null = null): Promise<Revocation> {
    const r = new Revocation(layout, await readRevocationState(layout), log);
    r.timer = setInterval(() => void r.refresh(), pollMs);
    r.timer.unref();
    return r;
  }

  /** Re-read now (a refresh already under way is shared). */
  refresh(): Promise<void> {
    this.refreshing ??= readRevocationState(this.layout)
      .then((s) => {
        this.state = s;
      })
      .catch((err: unknown) => {
        this.log?.error({ err }, 'could not re-read the deny list or the tenant list; keeping the last good one');
      })
      .finally(() => {
        this.refreshing = null;
      });
    return this.refreshing;
  }

  refusal(cred: Credential): Refusal | null {
    return credentialRefusal(this.state, cred);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
