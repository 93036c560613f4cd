// Requests and responses of the control routes: tenants (operators), origins, manifest signing.
import { z } from 'zod';
import { count, isoInstant, nonNegative } from '../../lib/json-schema.ts';
import { percent } from '../../billing/cost-rules.ts';
import { MAX_ORIGIN_LENGTH, MAX_ORIGINS } from '../../lib/origin-rules.ts';

const tenantInfo = {
  id: z.string(),
  customerId: z.string(),
  name: z.string(),
  cdnPricePerGb: nonNegative().nullable().describe('null: none on file, the platform default is assumed'),
  savingsSharePct: percent(),
  createdAt: isoInstant(),
  originsCount: count(),
  streams: count().describe('streams that have reported'),
  lastReportAt: isoInstant().nullable(),
};

export const TenantInfoSchema = z.object(tenantInfo).meta({ id: 'TenantInfo' });
export const TenantListSchema = z.object({ asOf: isoInstant().nullable(), tenants: z.array(TenantInfoSchema) }).meta({ id: 'TenantList' });
export const TenantDetailSchema = z.object({ asOf: isoInstant().nullable(), ...tenantInfo, streamIds: z.array(z.string()) }).meta({ id: 'TenantDetail' });


export const OriginsSchema = z
  .object({
    origins: z.array(z.url().max(MAX_ORIGIN_LENGTH)).max(MAX_ORIGINS),
    tenantId: z.string(),
    customerId: z.string(),
    updatedAt: isoInstant().nullable(),
    platformDefaultApplies: z.boolean().describe('the list is empty: signing enforces the platform default list'),
    platformDefault: z.array(z.url()).optional(),
  })
  .meta({ id: 'Origins' });

/**
 * The body of PUT .../origins. Its entries are checked one by one by the origin rules
 * (lib/origin-rules.ts), which say what is wrong with each.
 */
export const OriginsPutSchema = z
  .object({
    // What the document shows; validateOrigins enforces it, naming each bad entry.
    origins: z.unknown().meta({
      type: 'array',
      maxItems: MAX_ORIGINS,
      items: { type: 'string', maxLength: MAX_ORIGIN_LENGTH },
      description: 'absolute http(s) URLs with a host, optional port and path; no credentials, query or fragment; stored normalised and de-duplicated',
    }),
  })
  .meta({ id: 'OriginsPut' });

const base64url43 = z.string().regex(/^[A-Za-z0-9_-]{43}$/);
export const PublicKeySchema = z
  .object({ kty: z.literal('EC'), crv: z.literal('P-256'), x: base64url43, y: base64url43, use: z.literal('sig'), alg: z.literal('ES256') })
  .meta({ id: 'PublicKey' });

/** GET /.well-known/jwks.json: the public report-signing keys, never a private member (strict: `d` is refused). */
export const JwksSchema = z
  .object({
    keys: z.array(
      z.strictObject({
        kty: z.literal('EC'),
        crv: z.literal('P-256'),
        x: base64url43,
        y: base64url43,
        kid: z.string().describe('RFC 7638 thumbprint of the key; the `kid` in a statement\'s header'),
        use: z.literal('sig'),
        alg: z.literal('ES256'),
      }),
    ),
  })
  .meta({ id: 'JsonWebKeySet' });

/** The body of POST /manifest/sign; the URL itself is checked by checkManifestUrl (origin-rules.ts). */
export const SignRequestSchema = z
  .object({ url: z.unknown().meta({ type: 'string', format: 'uri' }), streamId: z.string().optional().describe("optional: one of the caller's streams, carried in the payload") })
  .meta({ id: 'SignRequest' });

export const SignResponseSchema = z
  .object({
    jws: z
      .string()
      .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
      .describe('compact JWS, ES256, over { url, customerId, streamId?, iat, exp }'),
    url: z.string().describe('the normalised URL that the allowlist checked (lower-case scheme and host, default port dropped, dot segments resolved): what the JWS signs'),
    customerId: z.string(),
    streamId: z.string().optional(),
    iat: z.int(),
    exp: z.int(),
    issuedAt: isoInstant(),
    expiresAt: isoInstant(),
  })
  .meta({ id: 'SignResponse' });
