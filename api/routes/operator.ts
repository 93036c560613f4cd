// Rule 6 of docs/api.md by structure: the routes reserved for operators are registered on
// the router made here, never on the main one, and that router's own middleware authenticates,
// refuses every tenant token (whatever customer it names), then checks the capability of the
// section (/telemetry and /metrics: telemetry:read, /control/tenants: tenants:read, /billing:
// billing:read).
// It is dispatched after the main router, not merged into it: @koa/router applies a merged
// router's `use` middleware to every route of the parent whose path it prefixes, which would put
// the operator check on /control/tenants/:id/origins too.
import { Router, type RouterMiddleware } from '@koa/router';
import { callerOf, requireCapability, requireOperator } from '../auth.ts';
import type { Capability } from '../tokens.ts';

/** The capability each section of the operator router needs, by path prefix. */
export const OPERATOR_SECTIONS: readonly { prefix: string; capability: Capability }[] = [
  { prefix: '/telemetry', capability: 'telemetry:read' },
  { prefix: '/control/tenants', capability: 'tenants:read' },
  { prefix: '/billing', capability: 'billing:read' },
  { prefix: '/metrics', capability: 'telemetry:read' },
];

const operatorOnly: RouterMiddleware = async (ctx, next) => {
  requireOperator(callerOf(ctx));
  await next();
};

const capability = (cap: Capability): RouterMiddleware =>
  async (ctx, next) => {
    requireCapability(callerOf(ctx), cap);
    await next();
  };

export function operatorRouter(auth: RouterMiddleware): Router {
  const router = new Router();
  router.use(auth, operatorOnly);
  for (const s of OPERATOR_SECTIONS) router.use(s.prefix, capability(s.capability));
  return router;
}

/** Every route of the operator router lies in a section: one outside would miss its capability check. */
export function assertSectioned(router: Router): void {
  for (const layer of router.stack) {
    if (layer.methods.length === 0) continue;
    const path = String(layer.path);
    if (!OPERATOR_SECTIONS.some((s) => path === s.prefix || path.startsWith(`${s.prefix}/`))) {
      throw new Error(`operator route ${path} is in no section of OPERATOR_SECTIONS`);
    }
  }
}
