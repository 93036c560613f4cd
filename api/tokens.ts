// API tokens (docs/api.md, "Tokens and roles"): self-contained HS256 JWTs carrying the
// tenant id, customerId, role, capabilities and expiry, verified without a lookup.
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { CUSTOMER_ID_PATTERN } from '../warehouse/ids.ts';
import { TENANT_ID_PATTERN, type Tenant } from '../control/tenants.ts';
import { loadOrCreateSecret, secretFromEnv } from '../control/secrets.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { InternalError } from '../lib/errors.ts';

export const CAPABILITIES = ['telemetry:read', 'tenants:read', 'billing:read'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const ROLE_CAPABILITIES = {
  tenant: ['telemetry:read'],
  operator: ['telemetry:read', 'tenants:read', 'billing:read'],
} as const satisfies Record<string, readonly Capability[]>;

const ISSUER = 'p2ptel';
const AUDIENCE = 'p2ptel-api';
const ALGORITHM = 'HS256';

const ClaimsSchema = z.discriminatedUnion('role', [
  z.object({
    role: z.literal('tenant'),
    sub: z.string().regex(TENANT_ID_PATTERN),
    cid: z.string().regex(CUSTOMER_ID_PATTERN),
    caps: z.array(z.enum(CAPABILITIES)),
    exp: z.number(),
    jti: z.string(),
  }),
  z.object({
    role: z.literal('operator'),
    sub: z.literal('operator'),
    caps: z.array(z.enum(CAPABILITIES)),
    exp: z.number(),
    jti: z.string(),
  }),
]);

/** Who is calling, as a verified token says. */
export type Caller =
  | { role: 'tenant'; tenantId: string; customerId: string; capabilities: ReadonlySet<Capability>; expiresAt: number; tokenId: string }
  | { role: 'operator'; capabilities: ReadonlySet<Capability>; expiresAt: number; tokenId: string };

export class TokenError extends InternalError {
  override name = 'TokenError';
  override readonly errorCode = 'token_refused';
}

/** No token lives longer than this, whatever the configuration says (a revoked id is kept as long). */
export const MAX_TOKEN_LIFETIME_SECONDS = 366 * 86_400;

/** A lifetime such as 30d, 12h, 90m or 3600s, in seconds, at most `max` (itself such a lifetime). */
export function parseTtl(ttl: string, max = '366d'): number {
  const seconds = ttlSeconds(ttl);
  const limit = Math.min(ttlSeconds(max), MAX_TOKEN_LIFETIME_SECONDS);
  if (seconds <= 0 || seconds > limit) throw new TokenError(`a lifetime is between 1 second and ${max}`);
  return seconds;
}

function ttlSeconds(ttl: string): number {
  const m = /^(\d{1,6})([smhd])$/.exec(ttl);
  if (!m) throw new TokenError(`a lifetime is a number and a unit s, m, h or d (e.g. 30d), not "${ttl}"`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86_400 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

/** The signing secret: TOKEN_SECRET when set, else control/token-secret (created on first use). */
export async function tokenSecret(layout: WarehouseLayout, fromEnv: string | null): Promise<Uint8Array> {
  return fromEnv ? secretFromEnv(fromEnv, 'TOKEN_SECRET') : loadOrCreateSecret(layout, 'token-secret');
}

export async function issueToken(
  secret: Uint8Array,
  who: { role: 'tenant'; tenant: Tenant } | { role: 'operator' },
  ttlSeconds: number,
  now = Math.floor(Date.now() / 1000),
): Promise<string> {
  const claims =
    who.role === 'tenant'
      ? { role: 'tenant', cid: who.tenant.customerId, caps: [...ROLE_CAPABILITIES.tenant] }
      : { role: 'operator', caps: [...ROLE_CAPABILITIES.operator] };
  return new SignJWT(claims)
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(who.role === 'tenant' ? who.tenant.id : 'operator')
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(secret);
}

export type VerifyFailure = 'malformed' | 'bad_signature' | 'expired' | 'invalid_claims';

export class TokenVerifyError extends InternalError {
  override name = 'TokenVerifyError';
  override readonly errorCode = 'token_invalid';
  constructor(readonly reason: VerifyFailure) {
    super(reason);
  }
}

/** The id (jti) and expiry of a token this secret signed, even an expired one; null when it is not one. */
export async function tokenIdentity(secret: Uint8Array, token: string): Promise<{ tokenId: string; expiresAt: number; expired: boolean } | null> {
  try {
    const c = await verifyToken(secret, token);
    return { tokenId: c.tokenId, expiresAt: c.expiresAt, expired: false };
  } catch (err) {
    if (!(err instanceof TokenVerifyError) || err.reason !== 'expired') return null;
  }
  // Expired: the signature was checked before the expiry, so the claims can be read as they are.
  const { payload } = await jwtVerify(token, secret, { issuer: ISSUER, audience: AUDIENCE, algorithms: [ALGORITHM], currentDate: new Date(0) }).catch(() => ({ payload: null }));
  const parsed = ClaimsSchema.safeParse(payload);
  return parsed.success ? { tokenId: parsed.data.jti, expiresAt: parsed.data.exp, expired: true } : null;
}

export async function verifyToken(secret: Uint8Array, token: string): Promise<Caller> {
  let payload: unknown;
  try {
    ({ payload } = await jwtVerify(token, secret, { issuer: ISSUER, audience: AUDIENCE, algorithms: [ALGORITHM] }));
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) throw new TokenVerifyError('expired');
    if (err instanceof joseErrors.JWSSignatureVerificationFailed) throw new TokenVerifyError('bad_signature');
    if (err instanceof joseErrors.JWTClaimValidationFailed) throw new TokenVerifyError('invalid_claims');
    throw new TokenVerifyError('malformed');
  }
  const parsed = ClaimsSchema.safeParse(payload);
  if (!parsed.success) throw new TokenVerifyError('invalid_claims');
  const c = parsed.data;
  const capabilities = new Set(c.caps);
  return c.role === 'tenant'
    ? { role: 'tenant', tenantId: c.sub, customerId: c.cid, capabilities, expiresAt: c.exp, tokenId: c.jti }
    : { role: 'operator', capabilities, expiresAt: c.exp, tokenId: c.jti };
}
