// The webhooks page (`/portal/webhooks`): a tenant's endpoints (their events, and whether one was
// disabled and why), the form that registers one (its signing secret shown once, on the answer to
// that form only), and a test ping per endpoint, all through the API's own routes
// (/control/webhooks). A refused URL is shown with the API's reason beside the field.
import type { Context } from 'koa';
import { ApiRefusal } from '../api-client.ts';
import { field } from '../security.ts';
import { sessionOf } from '../sign-in.ts';
import type { PortalDeps } from '../deps.ts';
import type { PageState } from '../page-state.ts';
import { EVENT_TYPES } from '../../alerts/incident-schema.ts';
import { pageFrame, type Viewer } from './common.ts';
import { apiPath, controlTarget, type Problem } from './control-forms.ts';

interface WebhookJson {
  id: string;
  url: string;
  events: string[];
  disabled: { at: string; reason: string } | null;
}

interface Outcome {
  notice: string | null;
  error: string | null;
  /** The new endpoint's secret: shown on this answer only. */
  secret: string | null;
  urlReason: string | null;
  entered: string;
}

const NO_OUTCOME: Outcome = { notice: null, error: null, secret: null, urlReason: null, entered: '' };

export async function webhooksView(ctx: Context, deps: PortalDeps, state: PageState, viewer: Viewer, outcome: Outcome = NO_OUTCOME) {
  const frame = pageFrame(ctx, state, viewer, 'webhooks');
  const target = controlTarget(viewer);
  if (target === null) return { ...frame, title: 'Webhooks', noTenant: true, noWindow: true };
  const { webhooks } = await deps.api.get<{ webhooks: WebhookJson[] }>(apiPath('/control/webhooks', target), sessionOf(ctx).token);
  return { ...frame, title: 'Webhooks', noWindow: true, webhooks, eventTypes: EVENT_TYPES, ...outcome, customerQs: target.customerQs };
}

/** A form's change: register an endpoint, or send one a test ping. */
export async function changeWebhooks(ctx: Context, deps: PortalDeps, state: PageState, viewer: Viewer) {
  const target = controlTarget(viewer);
  const form = ctx.state['form'] as Record<string, string | string[]>;
  const action = field(form, 'action');
  const again = (status: number, outcome: Partial<Outcome>) => webhooksView(ctx, deps, state, viewer, { ...NO_OUTCOME, ...outcome }).then((view) => ({ status, view }));
  if (target === null || (action !== 'create' && action !== 'test')) return again(400, { error: 'Unknown change.' });
  const { token } = sessionOf(ctx);
  if (action === 'test') {
    const res = await deps.api.request<Problem & { deliveryId?: string }>('POST', apiPath(`/control/webhooks/${encodeURIComponent(field(form, 'id'))}/test`, target), token);
    if (res.status === 202) return again(200, { notice: `A test ping is on its way (delivery ${res.body.deliveryId ?? ''}).` });
    if (res.status === 404) return again(404, { error: 'There is no such endpoint (deleted meanwhile?).' });
    throw new ApiRefusal(res.status, res.body, res.headers.get('retry-after'));
  }
  const url = field(form, 'url').trim();
  const chosen = [form['events'] ?? []].flat().filter((e) => (EVENT_TYPES as readonly string[]).includes(e));
  const res = await deps.api.request<Problem & { secret?: string }>('POST', apiPath('/control/webhooks', target), token, { url, ...(chosen.length > 0 ? { events: chosen } : {}) });
  if (res.status === 201) return again(200, { notice: 'Endpoint registered.', secret: res.body.secret ?? null });
  if (res.status === 400 || res.status === 409) {
    const reasons = (res.body.errors ?? []).map((e) => e.reason);
    return again(res.status, { error: res.body.detail ?? 'Refused.', urlReason: reasons.length > 0 ? reasons.join('; ') : (res.body.detail ?? null), entered: url });
  }
  throw new ApiRefusal(res.status, res.body, res.headers.get('retry-after'));
}
