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

/** Least time between two looks that credentials of a tenant a process does not know (yet) cause. */
export const UNKNOWN_TENANT_LOOK_MS = 100;

/**
 * The state of a process, refreshed every `pollMs`: checks on a request are synchronous set
 * lookups. A document that cannot be read keeps the last good state (and is logged); at start it
 * fails, so that a process never serves without knowing what is revoked.
 *
 * A tenant made since the last look is not known yet: a credential of it would be refused as of a
 * removed tenant until the next poll. `lookAgain` (what the API and the collector call for such a
 * credential before refusing it, and what `start` calls once it has made its sample tenant) waits
 * for a look that begins after the call, at most one every UNKNOWN_TENANT_LOOK_MS, so that a
 * credential is refused only by a state read after it was presented.
 */
export class Revocation {
  private timer: NodeJS.Timeout | null = null;
  private refreshing: { started: number; done: Promise<void> } | null = null;
  /** When the last look that has ended began (performance.now()). */
  private lookedAt: number;

  private constructor(
    private readonly layout: WarehouseLayout,
    private state: RevocationState,
    private readonly log: Logger | null,
    startedAt: number,
    private readonly pollMs: number,
  ) {
    this.lookedAt = startedAt;
  }

  static async start(layout: WarehouseLayout, pollMs: number, log: Logger | null = null): Promise<Revocation> {
    const started = performance.now();
    const r = new Revocation(layout, await readRevocationState(layout), log, started, pollMs);
    r.timer = setInterval(() => void r.refresh(), pollMs);
    r.timer.unref();
    return r;
  }

  /** Re-read now (a refresh already under way is shared, even one that began before this call). */
  refresh(): Promise<void> {
    if (this.refreshing) return this.refreshing.done;
    const started = performance.now();
    const done = readRevocationState(this.layout)
      .then((s) => {
        this.state = s;
      })
      .catch((err: unknown) => {
        this.log?.error({ err }, 'could not re-read the deny list or the tenant list; keeping the last good one');
      })
      .finally(() => {
        this.lookedAt = Math.max(this.lookedAt, started);
        this.refreshing = null;
      });
    this.refreshing = { started, done };
    return done;
  }

  /**
   * Resolves once a look that began after this call has ended (one begun before it may have
   * missed a document written just before the call): the look under way if it began since, else
   * a new one, at most one every UNKNOWN_TENANT_LOOK_MS (or `pollMs`, if shorter) whoever asks.
   */
  async lookAgain(): Promise<void> {
    const since = performance.now();
    while (this.lookedAt < since) {
      if (this.refreshing) {
        await this.refreshing.done;
        continue;
      }
      const wait = this.lookedAt + Math.min(this.pollMs, UNKNOWN_TENANT_LOOK_MS) - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      else await this.refresh();
    }
  }

  refusal(cred: Credential): Refusal | null {
    return credentialRefusal(this.state, cred);
  }

  /**
   * `refusal`, except that a credential refused for its tenant (unknown to this process, or
   * another tenant id) is looked at again (`lookAgain`) before it is refused: a tenant made a
   * moment ago is accepted on the first request, not after the next poll.
   */
  async refusalLookingAgain(cred: Credential): Promise<Refusal | null> {
    const refusal = this.refusal(cred);
    if (refusal !== 'tenant_removed') return refusal;
    await this.lookAgain();
    return this.refusal(cred);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
