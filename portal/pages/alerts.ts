// The alerts page (`/portal/alerts`): a tenant's alert rules (their state at the last evaluated
// snapshot), its open and recent incidents, and the forms that create and delete a rule, all
// through the API's own routes (/control/alerts, /control/incidents). A refused rule is shown with
// the API's reason beside each field it names, and nothing is saved.
import type { Context } from 'koa';
import { ApiRefusal } from '../api-client.ts';
import { field } from '../security.ts';
import { sessionOf } from '../sign-in.ts';
import type { PortalDeps } from '../deps.ts';
import type { PageState } from '../page-state.ts';
import { ALERT_METRICS, ALERT_WINDOWS } from '../../alerts/rule-schema.ts';
import { pageFrame, type Viewer } from './common.ts';
import { apiPath, controlTarget, type Problem } from './control-forms.ts';

interface RuleJson {
  id: string;
  name: string;
  metric: string;
  streamId?: string;
  filters?: string[];
  window: string;
  condition: 'above' | 'below';
  threshold: number;
  recoveryThreshold?: number;
  minSessions: number;
  for: string;
  state: string;
}

interface IncidentJson {
  id: string;
  ruleId: string;
  state: 'open' | 'resolved';
  openedAt: string;
  resolvedAt: string | null;
  valueAtOpen: number;
  worstValue: number;
  valueAtClose: number | null;
  rule?: { name?: string };
}

/** Recent resolved incidents shown. */
const RECENT_INCIDENTS = 20;

/** The create form's fields, in the form's order (the API's names). */
const FORM_FIELDS = ['name', 'metric', 'streamId', 'filters', 'window', 'condition', 'threshold', 'recoveryThreshold', 'minSessions', 'for'] as const;

interface Outcome {
  notice: string | null;
  error: string | null;
  /** The API's reason per form field. */
  reasons: Record<string, string>;
  /** What was entered, shown again after a refusal. */
  entered: Record<string, string>;
}

const NO_OUTCOME: Outcome = { notice: null, error: null, reasons: {}, entered: {} };

export async function alertsView(ctx: Context, deps: PortalDeps, state: PageState, viewer: Viewer, outcome: Outcome = NO_OUTCOME) {
  const frame = pageFrame(ctx, state, viewer, 'alerts');
  const target = controlTarget(viewer);
  if (target === null) return { ...frame, title: 'Alerts', noTenant: true, noWindow: true };
  const { token } = sessionOf(ctx);
  const [rules, open, resolved] = await Promise.all([
    deps.api.get<{ alerts: RuleJson[] }>(apiPath('/control/alerts', target), token),
    deps.api.get<{ incidents: IncidentJson[] }>(apiPath('/control/incidents?state=open', target), token),
    deps.api.get<{ incidents: IncidentJson[] }>(apiPath('/control/incidents?state=resolved', target), token),
  ]);
  const names = new Map(rules.alerts.map((r) => [r.id, r.name]));
  const incident = (i: IncidentJson) => ({ ...i, ruleName: names.get(i.ruleId) ?? i.rule?.name ?? i.ruleId });
  return {
    ...frame,
    title: 'Alerts',
    noWindow: true,
    rules: rules.alerts.map((r) => ({ ...r, scope: r.streamId ?? 'all streams', filterText: (r.filters ?? []).join(', '), recovery: r.recoveryThreshold ?? r.threshold })),
    openIncidents: open.incidents.map(incident),
    recentIncidents: resolved.incidents.slice(0, RECENT_INCIDENTS).map(incident),
    metrics: ALERT_METRICS,
    windows: ALERT_WINDOWS,
    ...outcome,
    customerQs: target.customerQs,
  };
}

/** The rule a create form describes, as the API's body (empty optional fields left out). */
function ruleBody(form: Record<string, string | string[]>): { body: Record<string, unknown>; entered: Record<string, string> } {
  const entered = Object.fromEntries(FORM_FIELDS.map((f) => [f, field(form, f)]));
  const body: Record<string, unknown> = { name: entered['name'], metric: entered['metric'], window: entered['window'], condition: entered['condition'], threshold: numberOf(entered['threshold']!) };
  if (entered['streamId']!.trim() !== '') body['streamId'] = entered['streamId']!.trim();
  const filters = entered['filters']!.split(/[\n,]/).map((f) => f.trim()).filter((f) => f !== '');
  if (filters.length > 0) body['filters'] = filters;
  if (entered['recoveryThreshold']!.trim() !== '') body['recoveryThreshold'] = numberOf(entered['recoveryThreshold']!);
  if (entered['minSessions']!.trim() !== '') body['minSessions'] = numberOf(entered['minSessions']!);
  if (entered['for']!.trim() !== '') body['for'] = entered['for']!.trim();
  return { body, entered };
}

/** A number field as a number when it is one (else as typed: the API says why it is not). */
function numberOf(text: string): number | string {
  const t = text.trim();
  return t !== '' && Number.isFinite(Number(t)) ? Number(t) : t;
}

/** The API's reasons by form field (`filters.0` is the filters field). */
function reasonsOf(problem: Problem): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of problem.errors ?? []) {
    const name = String(e.field ?? '').split('.')[0]!;
    const key = (FORM_FIELDS as readonly string[]).includes(name) ? name : 'form';
    out[key] = out[key] ? `${out[key]}; ${e.reason}` : e.reason;
  }
  return out;
}

/** A form's change: create a rule, or delete one. */
export async function changeAlerts(ctx: Context, deps: PortalDeps, state: PageState, viewer: Viewer) {
  const target = controlTarget(viewer);
  const form = ctx.state['form'] as Record<string, string | string[]>;
  const action = field(form, 'action');
  const again = (status: number, outcome: Partial<Outcome>) => alertsView(ctx, deps, state, viewer, { ...NO_OUTCOME, ...outcome }).then((view) => ({ status, view }));
  if (target === null || (action !== 'create' && action !== 'delete')) return again(400, { error: 'Unknown change.' });
  const { token } = sessionOf(ctx);
  if (action === 'delete') {
    const id = field(form, 'id');
    const res = await deps.api.request<Problem>('DELETE', apiPath(`/control/alerts/${encodeURIComponent(id)}`, target), token);
    if (res.status === 204) return again(200, { notice: 'Rule deleted.' });
    if (res.status === 404) return again(404, { error: 'There is no such rule (deleted meanwhile?).' });
    throw new ApiRefusal(res.status, res.body, res.headers.get('retry-after'));
  }
  const { body, entered } = ruleBody(form);
  const res = await deps.api.request<Problem & { name?: string }>('POST', apiPath('/control/alerts', target), token, body);
  if (res.status === 201) return again(200, { notice: `Rule “${res.body.name ?? ''}” created.` });
  if (res.status === 400 || res.status === 403 || res.status === 409) {
    const reasons = reasonsOf(res.body);
    // A stream of another customer (403) is the stream field's fault.
    if (res.status === 403) reasons['streamId'] = res.body.detail ?? 'not one of your streams';
    return again(res.status, { error: res.body.detail ?? 'Refused.', reasons, entered });
  }
  throw new ApiRefusal(res.status, res.body, res.headers.get('retry-after'));
}
