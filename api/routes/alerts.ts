// /control/alerts (docs/api.md, "Alerts and webhooks"): a tenant's alert rules, created,
// listed, read, changed and deleted, validated into problem+json with a reason per field; and
// their incidents. The rules are evaluated on every published snapshot (alerts/evaluate.ts).
import type { Router, RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import { problems } from '../../served/problems.ts';
import { readJsonBody } from '../body.ts';
import { queryOf } from '../query.ts';
import { controlTenant } from '../control-tenant.ts';
import type { ApiDeps } from '../deps.ts';
import { assertStreamAccess, callerOf } from '../auth.ts';
import type { Tenant } from '../../control/tenants.ts';
import { AlertRuleCreateSchema, AlertRulePatchSchema, type AlertRule, type RuleFields } from '../../alerts/rule-schema.ts';
import { fieldProblems, ruleProblems } from '../../alerts/rule-checks.ts';
import { addRule, changeRule, listRules, removeRule, RuleLimitReached } from '../../alerts/rules-store.ts';
import { publicIncident, readState } from '../../alerts/state-store.ts';

const ruleId = (ctx: Context) => String((ctx.params as Record<string, string>)['id']);

/** A rule as served: its fields, its customer and its state at the last evaluated snapshot. */
async function served(deps: ApiDeps, tenant: Tenant, rules: readonly AlertRule[]) {
  const { runs } = await readState(deps.layout, tenant.id);
  return rules.map((r) => ({ ...r, customerId: tenant.customerId, state: (Object.hasOwn(runs, r.id) ? runs[r.id]!.state : 'ok') }));
}

/** The rule's fields checked as a whole (a stream of the tenant, filters, hysteresis), or a 400/403. */
function checked(ctx: Context, deps: ApiDeps, tenant: Tenant, fields: RuleFields): RuleFields {
  const errors = ruleProblems(fields, deps.config.alerts.maxFiltersPerRule);
  if (errors.length > 0) throw problems.invalidAlertRule(errors);
  const caller = callerOf(ctx);
  if (fields.streamId !== undefined) {
    if (caller.role === 'tenant') assertStreamAccess(caller, fields.streamId);
    else if (!fields.streamId.startsWith(`${tenant.customerId}:`)) throw problems.invalidAlertRule([{ field: 'streamId', reason: `not a stream of customer ${tenant.customerId}` }]);
  }
  return fields;
}

async function create(ctx: Context, deps: ApiDeps): Promise<void> {
  const body = await readJsonBody(ctx);
  const parsed = AlertRuleCreateSchema.safeParse(body);
  if (!parsed.success) throw problems.invalidAlertRule(fieldProblems(parsed.error));
  const { customerId, for: forText, minSessions, ...rest } = parsed.data;
  const tenant = await controlTenant(ctx, deps, customerId);
  const fields = checked(ctx, deps, tenant, { ...rest, for: forText ?? '0s', minSessions: minSessions ?? 1 });
  let rule: AlertRule;
  try {
    rule = await addRule(deps.layout, tenant.id, fields, deps.config.alerts.maxRulesPerTenant);
  } catch (err) {
    if (err instanceof RuleLimitReached) throw problems.tooManyAlertRules(deps.config.alerts.maxRulesPerTenant);
    throw err;
  }
  deps.log.info({ reqId: ctx.state['reqId'], tenantId: tenant.id, ruleId: rule.id }, 'alert rule created');
  ctx.status = 201;
  ctx.set('Location', `/control/alerts/${rule.id}`);
  ctx.body = (await served(deps, tenant, [rule]))[0];
}

/** A patch applied to a rule: null clears an optional field. */
function patched(rule: AlertRule, patch: Record<string, unknown>): RuleFields {
  const { id: _i, createdAt: _c, updatedAt: _u, ...fields } = rule;
  const next: Record<string, unknown> = { ...fields };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k];
    else if (v !== undefined) next[k] = v;
  }
  return next as RuleFields;
}

async function update(ctx: Context, deps: ApiDeps): Promise<void> {
  const tenant = await controlTenant(ctx, deps);
  const body = await readJsonBody(ctx);
  const parsed = AlertRulePatchSchema.safeParse(body);
  if (!parsed.success) throw problems.invalidAlertRule(fieldProblems(parsed.error));
  const rule = await changeRule(deps.layout, tenant.id, ruleId(ctx), (old) => checked(ctx, deps, tenant, patched(old, parsed.data)));
  if (!rule) throw problems.alertRuleNotFound();
  ctx.body = (await served(deps, tenant, [rule]))[0];
}

async function findRule(ctx: Context, deps: ApiDeps): Promise<{ tenant: Tenant; rule: AlertRule }> {
  const tenant = await controlTenant(ctx, deps);
  const rule = (await listRules(deps.layout, tenant.id)).find((r) => r.id === ruleId(ctx));
  if (!rule) throw problems.alertRuleNotFound();
  return { tenant, rule };
}

export function alertsRoutes(router: Router, deps: ApiDeps, auth: RouterMiddleware): void {
  router.post('/control/alerts', auth, (ctx) => create(ctx, deps));
  router.get('/control/alerts', auth, async (ctx) => {
    const tenant = await controlTenant(ctx, deps);
    ctx.set('Cache-Control', 'private, no-cache');
    ctx.body = { alerts: await served(deps, tenant, await listRules(deps.layout, tenant.id)) };
  });
  router.get('/control/alerts/:id', auth, async (ctx) => {
    const { tenant, rule } = await findRule(ctx, deps);
    ctx.body = (await served(deps, tenant, [rule]))[0];
  });
  router.patch('/control/alerts/:id', auth, (ctx) => update(ctx, deps));
  router.delete('/control/alerts/:id', auth, async (ctx) => {
    const tenant = await controlTenant(ctx, deps);
    if (!(await removeRule(deps.layout, tenant.id, ruleId(ctx)))) throw problems.alertRuleNotFound();
    ctx.status = 204;
  });
  router.get('/control/alerts/:id/incidents', auth, async (ctx) => {
    const { tenant, rule } = await findRule(ctx, deps);
    const { incidents } = await readState(deps.layout, tenant.id);
    ctx.body = { incidents: incidents.filter((i) => i.ruleId === rule.id).map(publicIncident).reverse() };
  });
  router.get('/control/incidents', auth, async (ctx) => {
    const tenant = await controlTenant(ctx, deps);
    const state = queryOf(ctx)['state'];
    if (state !== undefined && state !== 'open' && state !== 'resolved') throw problems.invalidState();
    const { incidents } = await readState(deps.layout, tenant.id);
    ctx.body = { incidents: incidents.filter((i) => state === undefined || i.state === state).map(publicIncident).reverse() };
  });
}
