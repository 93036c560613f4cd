// What every portal page shares: who is looking (a tenant, an operator, an operator looking at one
// tenant), the navigation, the filter bar's model, chart data from a series, and the page's
// freshness (its snapshot, for the live updates).
import type { Context } from 'koa';
import { BREAKDOWN_DIMENSIONS } from '../../warehouse/reads/index.ts';
import { formatSeconds } from '../../pilot/human-format.ts';
import { sessionOf } from '../sign-in.ts';
import { PAGE_WINDOWS, filterOf, stateQuery, type PageState } from '../page-state.ts';
import type { Series } from '../figures.ts';

export interface Viewer {
  role: 'tenant' | 'operator';
  /** The customer whose figures the page shows: a tenant's own, an operator's chosen one, or null (the platform). */
  customerId: string | null;
  /** The tenant id of a tenant's own session (the origins route takes it). */
  tenantId: string | null;
}

export function viewerOf(ctx: Context, state: PageState): Viewer {
  const { caller } = sessionOf(ctx);
  if (caller.role === 'tenant') return { role: 'tenant', customerId: caller.customerId, tenantId: caller.tenantId };
  return { role: 'operator', customerId: state.customer ?? null, tenantId: null };
}

const WINDOW_LABELS: Record<string, string> = { live: 'Live hour', '1h': '1 hour', '24h': '24 hours', '7d': '7 days', '30d': '30 days', all: 'All time' };

/** The page's common view: navigation, window and bucket choices, the filter bar, the CSRF field. */
export function pageFrame(ctx: Context, state: PageState, viewer: Viewer, active: string) {
  const session = sessionOf(ctx);
  const base = ctx.path;
  const customerQs = viewer.role === 'operator' && viewer.customerId ? `?customer=${encodeURIComponent(viewer.customerId)}` : '';
  return {
    csrf: session.csrf,
    viewer,
    active,
    nav: navigation(viewer, customerQs),
    windows: PAGE_WINDOWS.map((w) => ({ label: WINDOW_LABELS[w], href: `${base}${stateQuery(state, { window: w })}`, current: w === state.window })),
    buckets: state.buckets.map((b) => ({ label: formatSeconds(b), href: `${base}${stateQuery(state, { bucket: b })}`, current: b === state.bucket })),
    windowLabel: WINDOW_LABELS[state.window],
    live: state.window === 'live',
    filterBar: filterBar(base, state),
    expiresAt: new Date(session.expiresAtMs).toISOString(),
  };
}

function navigation(viewer: Viewer, customerQs: string) {
  const tenantPages = [
    { id: 'overview', label: 'Overview', href: `/portal/${customerQs}` },
    { id: 'reports', label: 'Pilot reports', href: `/portal/reports${customerQs}` },
    { id: 'origins', label: 'Origins', href: `/portal/origins${customerQs}` },
    { id: 'alerts', label: 'Alerts', href: `/portal/alerts${customerQs}` },
    { id: 'webhooks', label: 'Webhooks', href: `/portal/webhooks${customerQs}` },
  ];
  if (viewer.role === 'tenant') return tenantPages;
  const operatorPages = [
    { id: 'platform', label: 'Platform', href: '/portal/' },
    { id: 'tenants', label: 'Tenants', href: '/portal/tenants' },
    { id: 'billing', label: 'Billing', href: '/portal/billing' },
  ];
  return viewer.customerId ? [...operatorPages, ...tenantPages] : operatorPages;
}

/** The filter bar: the filters in force (each with its removal link) and the form that adds one. */
function filterBar(base: string, state: PageState) {
  return {
    dimensions: BREAKDOWN_DIMENSIONS,
    applied: state.filters.map((f) => {
      const drop = f.startsWith('!');
      const [dimension, ...rest] = (drop ? f.slice(1) : f).split(':');
      const value = rest.join(':');
      return {
        text: `${dimension} ${drop ? '≠' : '='} ${value === '' ? '(none)' : value}`,
        removeHref: `${base}${stateQuery(state, { filters: state.filters.filter((x) => x !== f) })}`,
      };
    }),
    clearHref: state.filters.length > 0 ? `${base}${stateQuery(state, { filters: [] })}` : null,
    hidden: hiddenFields(state),
  };
}

/** The state as hidden fields of the filter form (a GET form: the new filter is added to them). */
function hiddenFields(state: PageState): { name: string; value: string }[] {
  const fields = [
    { name: 'window', value: state.window },
    { name: 'bucket', value: String(state.bucket) },
    { name: 'by', value: state.by },
    ...(state.customer ? [{ name: 'customer', value: state.customer }] : []),
  ];
  return [...fields, ...state.filters.map((f) => ({ name: 'filter', value: f }))];
}

/** The link that adds a filter to the page (a breakdown row's click). */
export function addFilterHref(base: string, state: PageState, dimension: string, value: string | null, drop = false): string {
  const f = filterOf(dimension, value, drop);
  return `${base}${stateQuery(state, { filters: state.filters.includes(f) ? state.filters : [...state.filters, f] })}`;
}

/** A series as chart columns (uPlot's shape: x in seconds, then one array per line). */
export function chartData(series: Series) {
  const b = series.buckets;
  return {
    bucketSeconds: series.bucketSeconds,
    x: b.map((r) => Date.parse(r.start) / 1000),
    sessions: b.map((r) => r.sessions),
    bytesOffloaded: b.map((r) => r.bytesOffloaded),
    bytesFallback: b.map((r) => r.bytesFallback),
    offloadRatio: b.map((r) => r.offloadRatio),
    rebufferEvents: b.map((r) => r.rebufferEvents),
    avgBufferHealth: b.map((r) => r.avgBufferHealth),
    avgPeerCount: b.map((r) => r.avgPeerCount),
    // With the quality figures (a stream's page): the rebuffer ratio and startup p95 per bucket, null where a bucket has none.
    ...(b.length > 0 && b[0]!.rebufferRatio !== undefined
      ? { rebufferRatio: b.map((r) => (r.watchMs! + r.stallMs! > 0 ? r.rebufferRatio! : null)), startupP95: b.map((r) => r.startupTimeP95Ms ?? null) }
      : {}),
  };
}
