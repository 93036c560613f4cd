// The manifest routes: GET /manifest/public-key (no token: the JWK that SDKs verify signatures
// with) and POST /manifest/sign (a tenant token signs a manifest URL of its allowed origins).
import type { Router, RouterMiddleware } from '@koa/router';
import { CompactSign } from 'jose';
import { createHash } from 'node:crypto';
import { assertStreamAccess, callerOf, refusalMessage } from '../auth.ts';
import { findTenant } from '../../control/tenants.ts';
import { problems } from '../../served/problems.ts';
import { readJsonBody } from '../body.ts';
import { SignRequestSchema } from '../schemas/control.ts';
import { notModified } from '../http-cache.ts';
import type { ApiDeps } from '../deps.ts';
import { effectiveAllowlist, readOrigins } from '../../control/origins.ts';
import { checkManifestUrl, urlAllowed } from '../../lib/origin-rules.ts';

export function manifestRoutes(router: Router, deps: ApiDeps, auth: RouterMiddleware): void {
  const jwk = Buffer.from(JSON.stringify(deps.signingKey.publicJwk));
  const jwkEtag = `"${createHash('sha256').update(jwk).digest('base64url').slice(0, 22)}"`;

  router.get('/manifest/public-key', (ctx) => {
    ctx.set('ETag', jwkEtag);
    ctx.set('Cache-Control', 'public, max-age=3600');
    if (notModified(ctx, jwkEtag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/json';
    ctx.body = jwk;
  });

  router.post('/manifest/sign', auth, async (ctx) => {
    const caller = callerOf(ctx);
    if (caller.role !== 'tenant') throw problems.tenantOnly();
    const body = await readJsonBody(ctx);
    const parsed = SignRequestSchema.safeParse(body);
    if (!parsed.success) {
      if (parsed.error.issues[0]?.path[0] === 'streamId') throw problems.invalidQuery('invalid_stream_id', 'streamId must be a string.');
      throw problems.invalidUrl('The body must be an object { "url": "https://..." }.');
    }
    const { url: raw, streamId } = parsed.data;
    const checked = checkManifestUrl(raw);
    if (!checked.ok) throw problems.invalidUrl(`${checked.reason}.`);
    if (streamId !== undefined) assertStreamAccess(caller, streamId);
    // The tenant must still exist (auth's view may be a second old): a removed tenant signs nothing.
    const tenant = await findTenant(deps.layout, caller.tenantId);
    if (!tenant || tenant.customerId !== caller.customerId) throw problems.invalidToken(refusalMessage('tenant_removed'));
    const stored = await readOrigins(deps.layout, caller.tenantId);
    const allowlist = effectiveAllowlist(stored, deps.platform.manifests.defaultOrigins);
    if (!urlAllowed(checked.url, allowlist)) throw problems.originNotAllowed();
    const iat = Math.floor(Date.now() / 1000);
    const exp = iat + deps.platform.manifests.signatureTtlSeconds;
    // Signed: the normalised URL that the allowlist checked, not the string as sent.
    const payload = { url: checked.url.href, customerId: caller.customerId, ...(streamId === undefined ? {} : { streamId }), iat, exp };
    const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
      .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
      .sign(deps.signingKey.privateKey);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { jws, ...payload, issuedAt: new Date(iat * 1000).toISOString(), expiresAt: new Date(exp * 1000).toISOString() };
  });
}
