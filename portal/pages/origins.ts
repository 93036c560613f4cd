// The origins page (`/portal/origins`): a tenant's allowlist shown and edited through the API's own
// route (add, remove, replace, clear to the platform default); an invalid origin is shown beside
// its field with the API's reason, and nothing is saved.
import type { Context } from 'koa';
import { ApiRefusal } from '../api-client.ts';
import { field } from '../security.ts';
import { sessionOf } from '../sign-in.ts';
import type { PortalDeps } from '../deps.ts';
import type { PageState } from '../page-state.ts';
import { pageFrame, type Viewer } from './common.ts';

interface OriginsJson {
  origins: string[];
  tenantId: string;
  updatedAt: string | null;
  platformDefaultApplies: boolean;
  platformDefault?: string[];
}

interface Problem {
  code?: string;
  detail?: string;
  errors?: { index: number | null; value: unknown; reason: string }[];
}

const ACTIONS = ['add', 'remove', 'replace', 'clear'] as const;
type Action = (typeof ACTIONS)[number];

/** Which tenant's list: a tenant its own; an operator the chosen one (none: nothing to edit). */
function tenantOf(viewer: Viewer): string | null {
  return viewer.role === 'tenant' ? viewer.tenantId : viewer.customerId;
}

export async function originsView(ctx: Context, deps: PortalDeps, state: PageState, viewer: Viewer, outcome: { error: string | null; problems: Problem['errors']; entered: string; saved: boolean } | null = null) {
  const tenant = tenantOf(viewer);
  const frame = pageFrame(ctx, state, viewer, 'origins');
  if (tenant === null) return { ...frame, title: 'Origins', noTenant: true, noWindow: true };
  const { token } = sessionOf(ctx);
  const stored = await deps.api.get<OriginsJson>(`/control/tenants/${encodeURIComponent(tenant)}/origins`, token);
  const reasons = new Map((outcome?.problems ?? []).map((p) => [p.index, p.reason]));
  return {
    ...frame,
    title: 'Origins',
    noWindow: true,
    origins: stored.origins.map((o, i) => ({ origin: o, index: i })),
    updatedAt: stored.updatedAt,
    platformDefaultApplies: stored.platformDefaultApplies,
    platformDefault: stored.platformDefault ?? [],
    saved: outcome?.saved ?? false,
    error: outcome?.error ?? null,
    problems: (outcome?.problems ?? []).map((p) => ({ value: typeof p.value === 'string' ? p.value : JSON.stringify(p.value), reason: p.reason })),
    addReason: reasons.get(stored.origins.length) ?? null,
    entered: outcome?.entered ?? '',
    customerQs: viewer.role === 'operator' && viewer.customerId ? `?customer=${encodeURIComponent(viewer.customerId)}` : '',
  };
}

/** The list a form asks for, from the stored one. */
function nextList(action: Action, stored: readonly string[], form: Record<string, string | string[]>): { list: string[]; entered: string } {
  const entered = field(form, action === 'replace' ? 'origins' : 'origin');
  switch (action) {
    case 'add':
      return { list: [...stored, entered.trim()], entered };
    case 'remove':
      return { list: stored.filter((o) => o !== entered), entered: '' };
    case 'replace':
      return { list: entered.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== ''), entered };
    case 'clear':
      return { list: [], entered: '' };
  }
}

/** A form's change, sent as the API's PUT (with If-Match: a change made meanwhile is refused, not lost). */
export async function changeOrigins(ctx: Context, deps: PortalDeps, state: PageState, viewer: Viewer) {
  const tenant = tenantOf(viewer);
  const form = ctx.state['form'] as Record<string, string | string[]>;
  const action = field(form, 'action') as Action;
  if (tenant === null || !ACTIONS.includes(action)) return { status: 400, view: await originsView(ctx, deps, state, viewer, { error: 'Unknown change.', problems: [], entered: '', saved: false }) };
  const { token } = sessionOf(ctx);
  const path = `/control/tenants/${encodeURIComponent(tenant)}/origins`;
  const current = await deps.api.request<OriginsJson>('GET', path, token);
  if (current.status !== 200) throw new ApiRefusal(current.status, current.body as Problem, null);
  const { list, entered } = nextList(action, current.body.origins, form);
  const etag = current.headers.get('etag');
  const put = await deps.api.request<Problem>('PUT', path, token, { origins: list }, undefined, etag ? { 'If-Match': etag } : {});
  if (put.status === 200) return { status: 200, view: await originsView(ctx, deps, state, viewer, { error: null, problems: [], entered: '', saved: true }) };
  if (put.status === 400 || put.status === 412) {
    const body = put.body;
    return { status: put.status, view: await originsView(ctx, deps, state, viewer, { error: body.detail ?? 'Refused.', problems: body.errors ?? [], entered, saved: false }) };
  }
  throw new ApiRefusal(put.status, put.body, put.headers.get('retry-after'));
}
