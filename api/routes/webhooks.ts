// /control/webhooks (docs/api.md, "Alerts and webhooks"): a tenant's endpoints, registered
// (the signing secret shown once), listed without secrets, deleted, their secret rotated (the old
// one signs too for a grace period), a ping sent, their deliveries listed and sent again by hand.
import type { Router, RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import { problems } from '../../served/problems.ts';
import { readJsonBody } from '../body.ts';
import { controlTenant } from '../control-tenant.ts';
import type { ApiDeps } from '../deps.ts';
import type { Tenant } from '../../control/tenants.ts';
import { fieldProblems } from '../../alerts/rule-checks.ts';
import { EVENT_TYPES } from '../../alerts/incident-schema.ts';
import { WebhookCreateSchema, type StoredEndpoint } from '../../alerts/webhooks/endpoint-schema.ts';
import { addEndpoint, changeEndpoint, EndpointLimitReached, listEndpoints, removeEndpoint, rotated } from '../../alerts/webhooks/endpoints-store.ts';
import { allowedAddresses, TargetForbidden, urlProblem } from '../../alerts/webhooks/target-check.ts';
import { newId } from '../../alerts/rules-store.ts';

const param = (ctx: Context, name: string) => String((ctx.params as Record<string, string>)[name]);

const shown = (tenant: Tenant, { secrets: _s, ...e }: StoredEndpoint) => ({ ...e, customerId: tenant.customerId });

/** The URL checked: its form (400 invalid_webhook), then where it resolves (400 webhook_target_forbidden). */
async function checkTarget(deps: ApiDeps, url: string): Promise<void> {
  const reason = urlProblem(url);
  if (reason) throw problems.invalidWebhook([{ field: 'url', reason }]);
  try {
    await allowedAddresses(new URL(url), deps.config.alerts.allowPrivateTargets);
  } catch (err) {
    if (err instanceof TargetForbidden) throw problems.webhookTargetForbidden(`${err.message}; set WEBHOOK_ALLOW_PRIVATE_TARGETS=1 to allow such targets`);
    throw problems.webhookTargetForbidden(`the host of this URL does not resolve (${(err as Error).message.split('\n')[0]})`);
  }
}

async function register(ctx: Context, deps: ApiDeps): Promise<void> {
  const body = await readJsonBody(ctx);
  const parsed = WebhookCreateSchema.safeParse(body);
  if (!parsed.success) throw problems.invalidWebhook(fieldProblems(parsed.error));
  const tenant = await controlTenant(ctx, deps, parsed.data.customerId);
  await checkTarget(deps, parsed.data.url);
  let e: StoredEndpoint;
  try {
    e = await addEndpoint(deps.layout, tenant.id, { url: parsed.data.url, events: [...new Set(parsed.data.events ?? EVENT_TYPES)] }, deps.config.alerts.maxWebhooksPerTenant);
  } catch (err) {
    if (err instanceof EndpointLimitReached) throw problems.tooManyWebhooks(deps.config.alerts.maxWebhooksPerTenant);
    throw err;
  }
  deps.log.info({ reqId: ctx.state['reqId'], tenantId: tenant.id, webhookId: e.id }, 'webhook endpoint registered');
  ctx.status = 201;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { ...shown(tenant, e), secret: e.secrets[0]!.secret };
}

async function endpointOf(ctx: Context, deps: ApiDeps): Promise<{ tenant: Tenant; endpoint: StoredEndpoint }> {
  const tenant = await controlTenant(ctx, deps);
  const endpoint = (await listEndpoints(deps.layout, tenant.id)).find((e) => e.id === param(ctx, 'id'));
  if (!endpoint) throw problems.webhookNotFound();
  return { tenant, endpoint };
}

export function webhooksRoutes(router: Router, deps: ApiDeps, auth: RouterMiddleware): void {
  router.post('/control/webhooks', auth, (ctx) => register(ctx, deps));
  router.get('/control/webhooks', auth, async (ctx) => {
    const tenant = await controlTenant(ctx, deps);
    ctx.body = { webhooks: (await listEndpoints(deps.layout, tenant.id)).map((e) => shown(tenant, e)) };
  });
  router.delete('/control/webhooks/:id', auth, async (ctx) => {
    const tenant = await controlTenant(ctx, deps);
    if (!(await removeEndpoint(deps.layout, tenant.id, param(ctx, 'id')))) throw problems.webhookNotFound();
    ctx.status = 204;
  });
  router.post('/control/webhooks/:id/rotate', auth, async (ctx) => {
    const { tenant, endpoint } = await endpointOf(ctx, deps);
    const e = (await changeEndpoint(deps.layout, tenant.id, endpoint.id, (x) => rotated(x, deps.config.alerts.secretGraceMs)))!;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { ...shown(tenant, e), secret: e.secrets[0]!.secret, previousSecretsValidUntil: e.secrets[1]?.notAfter ?? null };
  });
  router.post('/control/webhooks/:id/test', auth, async (ctx) => {
    const { tenant, endpoint } = await endpointOf(ctx, deps);
    const now = new Date().toISOString();
    const d = await deps.outbox.enqueue(tenant.id, endpoint, { id: newId('msg'), type: 'ping', timestamp: now, data: { webhookId: endpoint.id, message: 'a test ping from p2ptel' } });
    ctx.status = 202;
    ctx.body = { deliveryId: d.id, eventId: d.eventId };
  });
  router.get('/control/webhooks/:id/deliveries', auth, async (ctx) => {
    const { tenant, endpoint } = await endpointOf(ctx, deps);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { deliveries: (await deps.outbox.list(tenant.id, endpoint.id)).map(({ body: _b, tenantId: _t, ...d }) => d) };
  });
  router.post('/control/webhooks/:id/deliveries/:deliveryId/redeliver', auth, async (ctx) => {
    const { tenant, endpoint } = await endpointOf(ctx, deps);
    const d = await deps.outbox.redeliver(tenant.id, endpoint.id, param(ctx, 'deliveryId'));
    if (!d) throw problems.deliveryNotFound();
    ctx.status = 202;
    ctx.body = { deliveryId: d.id, eventId: d.eventId };
  });
}
