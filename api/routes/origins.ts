// GET and PUT /control/tenants/:id/origins: a tenant's allowlist of content origins, by tenant id
// or customerId. A tenant token manages only its own list (customer-match check, not tenants:read);
// an operator any. A PUT replaces the whole list atomically, or stores nothing and says why.
import type { Router, RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import { callerOf } from '../auth.ts';
import { problems } from '../../served/problems.ts';
import { readJsonBody } from '../body.ts';
import { notModified } from '../http-cache.ts';
import { OriginsPutSchema } from '../schemas/control.ts';
import type { ApiDeps } from '../deps.ts';
import { findTenant, type Tenant } from '../../control/tenants.ts';
import { readOrigins, replaceOrigins, VersionMismatch, type StoredOrigins } from '../../control/origins.ts';
import { validateOrigins } from '../../lib/origin-rules.ts';

/** The tenant named in the path, if the caller may manage it: 403 for another's, 404 for none. */
async function tenantOfPath(ctx: Context, deps: ApiDeps): Promise<Tenant> {
  const caller = callerOf(ctx);
  const id = String((ctx.params as Record<string, string>)['id']);
  if (caller.role === 'tenant' && id !== caller.tenantId && id !== caller.customerId) throw problems.forbiddenTenant();
  const tenant = await findTenant(deps.layout, id);
  if (!tenant) throw problems.tenantNotFound();
  if (caller.role === 'tenant' && tenant.id !== caller.tenantId) throw problems.forbiddenTenant();
  return tenant;
}

const etagOf = (tenant: Tenant, stored: StoredOrigins) => `"${tenant.id}.${stored.version}"`;

function send(ctx: Context, tenant: Tenant, stored: StoredOrigins, platformDefault: readonly string[]): void {
  ctx.set('ETag', etagOf(tenant, stored));
  ctx.set('Cache-Control', 'private, no-cache');
  ctx.body = {
    origins: stored.origins,
    tenantId: tenant.id,
    customerId: tenant.customerId,
    updatedAt: stored.updatedAt,
    // When the list is empty, /manifest/sign enforces the platform's default list instead.
    platformDefaultApplies: stored.origins.length === 0,
    ...(stored.origins.length === 0 ? { platformDefault } : {}),
  };
}

/** The version an If-Match header names for this tenant: undefined for none or `*`, null when it names another. */
function expectedVersion(ctx: Context, tenant: Tenant): number | undefined | null {
  const header = ctx.get('If-Match');
  if (!header || header.trim() === '*') return undefined;
  for (const tag of header.split(',')) {
    const m = /^"([^".]+)\.(\d+)"$/.exec(tag.trim());
    if (m && m[1] === tenant.id) return Number(m[2]);
  }
  return null;
}

export function originsRoutes(router: Router, deps: ApiDeps, auth: RouterMiddleware): void {
  router.get('/control/tenants/:id/origins', auth, async (ctx) => {
    const tenant = await tenantOfPath(ctx, deps);
    const stored = await readOrigins(deps.layout, tenant.id);
    const etag = etagOf(tenant, stored);
    if (notModified(ctx, etag)) {
      ctx.status = 304;
      ctx.set('ETag', etag);
      return;
    }
    send(ctx, tenant, stored, deps.platform.manifests.defaultOrigins);
  });

  router.put('/control/tenants/:id/origins', auth, async (ctx) => {
    const tenant = await tenantOfPath(ctx, deps);
    const body = await readJsonBody(ctx);
    const parsed = OriginsPutSchema.safeParse(body);
    if (!parsed.success) throw problems.invalidOrigins([{ index: null, value: body, reason: 'the body must be an object { "origins": [ ... ] }' }]);
    const checked = validateOrigins(parsed.data.origins);
    if (!checked.ok) throw problems.invalidOrigins(checked.problems);
    const expected = expectedVersion(ctx, tenant);
    if (expected === null) throw problems.preconditionFailed(etagOf(tenant, await readOrigins(deps.layout, tenant.id)));
    let stored: StoredOrigins;
    try {
      stored = await replaceOrigins(deps.layout, tenant.id, checked.origins, expected);
    } catch (err) {
      if (err instanceof VersionMismatch) throw problems.preconditionFailed(etagOf(tenant, err.current));
      throw err;
    }
    deps.log.info({ reqId: ctx.state['reqId'], tenantId: tenant.id, origins: stored.origins.length, version: stored.version }, 'origins replaced');
    send(ctx, tenant, stored, deps.platform.manifests.defaultOrigins);
  });
}
