// Authentication (Bearer tokens, verified without a lookup) and the authorisation rules of
// telemetry-api.md: tenant scoping by stream id prefix, capabilities, operator-only routes.
import type { Context, Next } from 'koa';
import { LRUCache } from 'lru-cache';
import { problems } from './errors.ts';
import { TokenVerifyError, verifyToken, type Caller, type Capability } from './tokens.ts';
import { streamBelongsTo } from '../warehouse/ids.ts';
import type { Credential, Refusal, Revocation } from '../warehouse/control/revocation.ts';

const REASONS: Record<TokenVerifyError['reason'], string> = {
  malformed: 'The token is malformed.',
  bad_signature: 'The token signature does not verify.',
  expired: 'The token has expired.',
  invalid_claims: 'The token does not carry valid claims.',
};

const REFUSALS: Record<Refusal, string> = {
  revoked: 'The token has been revoked.',
  tenant_removed: 'The tenant of this token no longer exists.',
};

/**
 * Verify the Bearer token of every request that reaches it. Verified tokens are remembered
 * (bounded, until they expire) so that a client's repeated calls do not pay the HMAC each time;
 * revocation (deny list, removed tenants) is checked on every request, remembered or not.
 */
export function authenticate(secret: Uint8Array, revocation: Pick<Revocation, 'refusal'>) {
  const verified = new LRUCache<string, Caller>({ max: 10_000 });
  return async function authMiddleware(ctx: Context, next: Next): Promise<void> {
    // Node keeps only the first of repeated Authorization headers: refuse the ambiguity instead.
    if ((ctx.req.headersDistinct['authorization']?.length ?? 0) > 1) throw problems.duplicateAuthorization();
    const header = ctx.get('Authorization');
    if (!header) throw problems.missingToken();
    const m = /^Bearer ([A-Za-z0-9._~+/=-]{1,4096})$/.exec(header);
    if (!m) throw problems.invalidToken('The Authorization header must be "Bearer <token>".');
    const token = m[1]!;
    let caller = verified.get(token);
    if (caller && caller.expiresAt * 1000 <= Date.now()) {
      verified.delete(token);
      caller = undefined;
      throw problems.invalidToken(REASONS.expired);
    }
    if (!caller) {
      try {
        caller = await verifyToken(secret, token);
      } catch (err) {
        if (err instanceof TokenVerifyError) throw problems.invalidToken(REASONS[err.reason]);
        throw err;
      }
      verified.set(token, caller);
    }
    const refusal = revocation.refusal(credentialOf(caller));
    if (refusal) throw problems.invalidToken(REFUSALS[refusal]);
    ctx.state['caller'] = caller;
    await next();
  };
}

/** A caller as the revocation rule sees it. */
export function credentialOf(caller: Caller): Credential {
  return caller.role === 'tenant'
    ? { tokenId: caller.tokenId, customerId: caller.customerId, tenantId: caller.tenantId }
    : { tokenId: caller.tokenId };
}

/** The refusal message of a credential that revocation refuses, for routes that check again. */
export function refusalMessage(refusal: Refusal): string {
  return REFUSALS[refusal];
}

export function callerOf(ctx: Context): Caller {
  return ctx.state['caller'] as Caller;
}

export function requireCapability(caller: Caller, cap: Capability): void {
  if (!caller.capabilities.has(cap)) throw problems.missingCapability(cap);
}

export function requireOperator(caller: Caller): void {
  if (caller.role !== 'operator') throw problems.operatorOnly();
}

/** A stream the caller may read: its own (by prefix) for a tenant, any for an operator. */
export function assertStreamAccess(caller: Caller, streamId: string): void {
  if (caller.role === 'tenant' && !streamBelongsTo(streamId, caller.customerId)) throw problems.forbiddenStream();
}

export function canSee(caller: Caller, streamId: string): boolean {
  return caller.role === 'operator' || streamBelongsTo(streamId, caller.customerId);
}
