// The routes that rule 6 of telemetry-api.md reserves for operators (billing, tenant list and
// detail), and their guard: 403 to every tenant token, whatever customer it names.
import type { RouterMiddleware } from '@koa/router';
import { callerOf, requireCapability, requireOperator } from '../auth.ts';
import type { Capability } from '../tokens.ts';

export const OPERATOR_ONLY_ROUTES: { path: string; capability: Capability }[] = [
  { path: '/billing/summary', capability: 'billing:read' },
  { path: '/billing/invoices', capability: 'billing:read' },
  { path: '/billing/invoices/:id', capability: 'billing:read' },
  { path: '/billing/customers/:customerId', capability: 'billing:read' },
  { path: '/billing/usage/:customerId', capability: 'billing:read' },
  { path: '/control/tenants', capability: 'tenants:read' },
  { path: '/control/tenants/:id', capability: 'tenants:read' },
];

/** Guard of an operator-only route: 403 for tenants, then the capability. */
export function operatorGuard(capability: Capability): RouterMiddleware {
  return async (ctx, next) => {
    const caller = callerOf(ctx);
    requireOperator(caller);
    requireCapability(caller, capability);
    await next();
  };
}
