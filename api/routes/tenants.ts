// GET /control/tenants and GET /control/tenants/:id (operators, tenants:read): every tenant with
// its ids, name, rates, number of allowed origins, streams and last report time.
import type { Router } from '@koa/router';
import { problems } from '../../served/problems.ts';
import type { ApiDeps } from '../deps.ts';
import { currentSnapshot } from '../request-context.ts';
import type { ServedSnapshot } from '../../served/snapshot-store.ts';
import { findTenant, listTenants, type Tenant } from '../../control/tenants.ts';
import { readOrigins } from '../../control/origins.ts';
import { streamBelongsTo } from '../../warehouse/ids.ts';

async function describeTenant(deps: ApiDeps, snap: ServedSnapshot | null, tenant: Tenant, withStreams: boolean) {
  const streams = snap ? [...snap.summaries.get('all')!.values()].filter((s) => streamBelongsTo(s.streamId, tenant.customerId)) : [];
  const last = streams.reduce<string | null>((a, s) => (s.lastSeenAt !== null && (a === null || s.lastSeenAt > a) ? s.lastSeenAt : a), null);
  const origins = await readOrigins(deps.layout, tenant.id);
  return {
    id: tenant.id,
    customerId: tenant.customerId,
    name: tenant.name,
    cdnPricePerGb: tenant.cdnPricePerGb,
    savingsSharePct: tenant.savingsSharePct,
    createdAt: tenant.createdAt,
    originsCount: origins.origins.length,
    streams: streams.length,
    lastReportAt: last,
    ...(withStreams ? { streamIds: streams.map((s) => s.streamId) } : {}),
  };
}

/** Registered on the operator router (routes/operator.ts: operators with tenants:read). */
export function tenantsRoutes(router: Router, deps: ApiDeps): void {
  router.get('/control/tenants', async (ctx) => {
    const snap = currentSnapshot(ctx);
    const tenants = await listTenants(deps.layout);
    ctx.set('Cache-Control', 'private, no-cache');
    ctx.body = {
      asOf: snap?.manifest.asOf ?? null,
      tenants: await Promise.all([...tenants].sort((a, b) => a.customerId.localeCompare(b.customerId)).map((t) => describeTenant(deps, snap, t, false))),
    };
  });

  router.get('/control/tenants/:id', async (ctx) => {
    const tenant = await findTenant(deps.layout, String((ctx.params as Record<string, string>)['id']));
    if (!tenant) throw problems.tenantNotFound();
    ctx.set('Cache-Control', 'private, no-cache');
    ctx.body = { asOf: currentSnapshot(ctx)?.manifest.asOf ?? null, ...(await describeTenant(deps, currentSnapshot(ctx), tenant, true)) };
  });
}
