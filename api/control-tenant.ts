// Which tenant a control route acts for (alerts, webhooks): a tenant token its own; an operator
// token the tenant it names with `customerId` (in the query, or the body of a POST), 400 without.
import type { Context } from 'koa';
import { callerOf } from './auth.ts';
import { problems } from '../served/problems.ts';
import { queryOf } from './query.ts';
import type { ApiDeps } from './deps.ts';
import { findTenant, type Tenant } from '../control/tenants.ts';

export async function controlTenant(ctx: Context, deps: ApiDeps, bodyCustomerId?: unknown): Promise<Tenant> {
  const caller = callerOf(ctx);
  if (caller.role === 'tenant') {
    const own = await findTenant(deps.layout, caller.tenantId);
    if (!own) throw problems.tenantNotFound();
    return own;
  }
  const q = queryOf(ctx)['customerId'];
  const named = typeof q === 'string' ? q : typeof bodyCustomerId === 'string' ? bodyCustomerId : null;
  if (!named) throw problems.customerIdRequired();
  const tenant = await findTenant(deps.layout, named);
  if (!tenant) throw problems.tenantNotFound();
  return tenant;
}
