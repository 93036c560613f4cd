// Authentication (Bearer tokens, verified without a lookup) and the authorisation rules of
// docs/api.md: tenant scoping by stream id prefix, capabilities, operator-only routes.
import type { IncomingMessage } from 'node:http';
import type { Context, Next } from 'koa';
import { problems } from '../served/problems.ts';
import { TokenVerifyError, verifyToken, type Caller, type Capability } from './tokens.ts';
import { streamBelongsTo } from '../warehouse/ids.ts';
import type { Credential, Refusal, Revocation } from '../control/revocation.ts';

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

/** Verified tokens remembered per process (each entry holds a caller; a few hundred bytes). */
const VERIFIED_TOKENS_MAX = 10_000;

interface Verified {
  caller: Caller;
  credential: Credential;
}

/**
 * Tokens that verified, by the exact Authorization header that carried them, until they expire.
 * Bounded: when full, the oldest entry goes (a client whose entry went pays one verification).
 */
class VerifiedTokens {
  private readonly byHeader = new Map<string, Verified>();

  constructor(private readonly max: number) {}

  /** The verified caller of this header; undefined if not remembered or expired (then forgotten). */
  get(header: string, nowMs: number): Verified | undefined {
    const v = this.byHeader.get(header);
    if (v === undefined) return undefined;
    if (v.caller.expiresAt * 1000 <= nowMs) {
      this.byHeader.delete(header);
      return undefined;
    }
    return v;
  }

  set(header: string, caller: Caller): Verified {
    if (this.byHeader.size >= this.max) this.byHeader.delete(this.byHeader.keys().next().value!);
    const v = { caller, credential: credentialOf(caller) };
    this.byHeader.set(header, v);
    return v;
  }
}

/** Whether the request carries more than one Authorization header (Node keeps only the first). */
function repeatedAuthorization(rawHeaders: string[]): boolean {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization' && ++seen > 1) return true;
  }
  return false;
}

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]{1,4096})$/;

/**
 * Verify the Bearer token of every request that reaches it. Verified tokens are remembered
 * (bounded, until they expire, by the exact header, so a remembered one needs no parsing either)
 * so that a client's repeated calls do not pay the HMAC each time; expiry and revocation (deny
 * list, removed tenants) are checked on every request, remembered or not.
 */
export class TokenAuth {
  private readonly verified = new VerifiedTokens(VERIFIED_TOKENS_MAX);

  constructor(
    private readonly secret: Uint8Array,
    private readonly revocation: Pick<Revocation, 'refusal' | 'refusalLookingAgain'>,
  ) {}

  /** The middleware of every route that needs a token (its identity marks those routes). */
  readonly middleware = async (ctx: Context, next: Next): Promise<void> => {
    // Node keeps only the first of repeated Authorization headers: refuse the ambiguity instead.
    if (repeatedAuthorization(ctx.req.rawHeaders)) throw problems.duplicateAuthorization();
    const header = ctx.req.headers.authorization;
    if (!header) throw problems.missingToken();
    const now = Date.now();
    let v = this.verified.get(header, now);
    if (!v) {
      const m = BEARER.exec(header);
      if (!m) throw problems.invalidToken('The Authorization header must be "Bearer <token>".');
      let caller: Caller;
      try {
        caller = await verifyToken(this.secret, m[1]!);
      } catch (err) {
        if (err instanceof TokenVerifyError) throw problems.invalidToken(REASONS[err.reason]);
        throw err;
      }
      // verifyToken refuses an expired token; one that expires this very millisecond is refused too.
      if (caller.expiresAt * 1000 <= now) throw problems.invalidToken(REASONS.expired);
      v = this.verified.set(header, caller);
    }
    let refusal = this.revocation.refusal(v.credential);
    // A token of a tenant made since the last look at the tenant list is looked at again, not refused.
    if (refusal === 'tenant_removed') refusal = await this.revocation.refusalLookingAgain(v.credential);
    if (refusal) throw problems.invalidToken(REFUSALS[refusal]);
    ctx.state['caller'] = v.caller;
    await next();
  };

  /**
   * The caller of a request whose token the middleware would let through without verifying it
   * again: its exact header verified before, has not expired and is not refused now. Null in every
   * other case (never a refusal: the middleware answers those, with their reasons).
   */
  remembered(req: IncomingMessage): Caller | null {
    const header = req.headers.authorization;
    if (!header || repeatedAuthorization(req.rawHeaders)) return null;
    const v = this.verified.get(header, Date.now());
    if (!v || this.revocation.refusal(v.credential)) return null;
    return v.caller;
  }
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
