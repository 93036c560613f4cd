// The portal's routes under /portal/ (docs/portal.md): sign-in and out, the pages of a tenant and
// of an operator, their live event stream, downloads, and the hashed assets. Every page reads its
// figures from the JSON API as the signed-in caller; an error of the API is shown as a page with its
// status (a foreign stream: 403, like the API).
import { Router } from '@koa/router';
import type { Context, Next } from 'koa';
import { canSee } from '../api/auth.ts';
import { ApiRefusal } from './api-client.ts';
import { ApiError } from '../lib/http/problem.ts';
import { PageReads } from './figures.ts';
import { filterOf, pageState, stateQuery, type PageState } from './page-state.ts';
import { parseFilters } from '../served/breakdown-filters.ts';
import { portalHeaders } from './security.ts';
import { pageHtml, renderPage, sendPage, wantsFragment } from './render.ts';
import { FragmentRenders } from './fragment-renders.ts';
import { requireSession, sessionOf, signInRoutes } from './sign-in.ts';
import { eventStream } from './events.ts';
import { exportDownload, reportDownload } from './downloads.ts';
import { clientGone } from './client-gone.ts';
import { viewerOf, type Viewer } from './pages/common.ts';
import { overviewView } from './pages/overview.ts';
import { reportLinks, reportVerdict, streamView } from './pages/stream.ts';
import { reportsView } from './pages/reports.ts';
import { changeOrigins, originsView } from './pages/origins.ts';
import { billingView, tenantsView } from './pages/operator.ts';
import { alertsView, changeAlerts } from './pages/alerts.ts';
import { changeWebhooks, webhooksView } from './pages/webhooks.ts';
import type { PortalAssets } from './assets.ts';
import type { PortalDeps } from './deps.ts';

type PageHandler = (ctx: Context, reads: PageReads, state: PageState, viewer: Viewer) => Promise<Record<string, unknown>>;

export function portalRouter(deps: PortalDeps, assets: PortalAssets, fragments = new FragmentRenders()): Router {
  const router = new Router({ prefix: '/portal' });
  router.get('/assets/:name', (ctx) => serveAsset(ctx, assets));
  signInRoutes(router, deps, assets);
  const signedIn = requireSession(deps);
  const page = (template: string, view: PageHandler, operatorOnly = false) => async (ctx: Context) => {
    const state = pageState(ctx.query);
    if (ctx.query['fdim'] !== undefined) return addedFilter(ctx, state);
    const viewer = viewerOf(ctx, state);
    if (operatorOnly && viewer.role !== 'operator') throw new ApiRefusal(403, { code: 'operator_only', detail: 'This page is for the platform operators.' }, null);
    if (!wantsFragment(ctx)) return renderPage(ctx, assets, template, await view(ctx, reads(ctx, deps), state, viewer));
    // A live update: the concurrent ones of this session, URL and snapshot share one render.
    const snapshotId = deps.store.current()?.id ?? null;
    const html = await fragments.html(sessionOf(ctx), snapshotId, ctx.url, clientGone(ctx), async (signal) => pageHtml(assets, template, await view(ctx, reads(ctx, deps, signal, snapshotId), state, viewer), true));
    sendPage(ctx, html);
  };
  router.get('/', signedIn, page('overview', overviewView));
  router.get('/reports', signedIn, page('reports', reportsView));
  router.get('/tenants', signedIn, page('tenants', tenantsView, true));
  router.get('/billing', signedIn, page('billing', billingView, true));
  router.get('/streams/:streamId', signedIn, guardStream, page('stream', streamPage));
  router.get('/streams/:streamId/report.:format', signedIn, guardStream, (ctx) => reportDownload(ctx, deps, streamIdOf(ctx), String(ctx.params['format'])));
  router.get('/streams/:streamId/export', signedIn, guardStream, (ctx) => exportDownload(ctx, deps, streamIdOf(ctx)));
  router.get('/origins', signedIn, page('origins', (ctx, _r, state, viewer) => originsView(ctx, deps, state, viewer)));
  router.post('/origins', signedIn, async (ctx) => {
    const state = pageState(ctx.query);
    const { status, view } = await changeOrigins(ctx, deps, state, viewerOf(ctx, state));
    renderPage(ctx, assets, 'origins', view, status);
  });
  for (const [name, view, change] of [['alerts', alertsView, changeAlerts], ['webhooks', webhooksView, changeWebhooks]] as const) {
    router.get(`/${name}`, signedIn, page(name, (ctx, _r, state, viewer) => view(ctx, deps, state, viewer)));
    router.post(`/${name}`, signedIn, async (ctx) => {
      const state = pageState(ctx.query);
      const { status, view: shown } = await change(ctx, deps, state, viewerOf(ctx, state));
      renderPage(ctx, assets, name, shown, status);
    });
  }
  // A rule's link in a webhook event (alerts/notify.ts): its row on the alerts page.
  router.get('/alerts/:id', signedIn, (ctx) => {
    ctx.status = 303;
    ctx.redirect(`/portal/alerts${ctx.querystring ? `?${ctx.querystring}` : ''}#rule-${encodeURIComponent(String(ctx.params['id']))}`);
  });
  router.get('/events', signedIn, (ctx) => eventStream(ctx, deps));
  return router;
}

const reads = (ctx: Context, deps: PortalDeps, signal: AbortSignal = clientGone(ctx), snapshotId = deps.store.current()?.id ?? null) => new PageReads(deps.api, sessionOf(ctx).token, signal, snapshotId);

/** The stream's page: its figures, and on a whole page (not a live update) its report's verdict. */
const streamPage: PageHandler = async (ctx, r, state, viewer) => {
  const streamId = streamIdOf(ctx);
  const [view, verdict] = await Promise.all([streamView(ctx, r, state, viewer, streamId), wantsFragment(ctx) ? null : reportVerdict(r, streamId)]);
  return { ...view, verdict, report: reportLinks(ctx.path, verdict?.published === true) };
};

/** The filter bar's form (dimension, keep or drop, value) becomes the page's URL with that filter added. */
function addedFilter(ctx: Context, state: PageState): void {
  const one = (name: string) => String([ctx.query[name]].flat()[0] ?? '');
  const dimension = one('fdim');
  const filter = filterOf(dimension, one('fvalue').trim() || null, one('fop') === 'drop');
  // The API's own parsing says whether the filter is valid (its 400 is the page's).
  parseFilters([...state.filters, filter]);
  ctx.status = 303;
  ctx.redirect(`${ctx.path}${stateQuery(state, { filters: [...state.filters, filter] })}`);
}

function streamIdOf(ctx: Context): string {
  return String(ctx.params['streamId']);
}

/** Another customer's stream is refused before anything is read, like the API (403). */
async function guardStream(ctx: Context, next: Next): Promise<void> {
  if (!canSee(sessionOf(ctx).caller, streamIdOf(ctx))) throw new ApiRefusal(403, { code: 'forbidden_stream', detail: 'This stream is not attributed to your account.' }, null);
  await next();
}

function serveAsset(ctx: Context, assets: PortalAssets): void {
  const a = assets.byName.get(String(ctx.params['name']));
  if (!a) {
    ctx.status = 404;
    return;
  }
  const gzip = /\bgzip\b/.test(ctx.get('Accept-Encoding'));
  ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
  ctx.set('Vary', 'Accept-Encoding');
  ctx.type = a.type;
  if (gzip) ctx.set('Content-Encoding', 'gzip');
  ctx.body = gzip ? a.gzip : a.body;
}

/**
 * What every request under /portal gets, a route of the portal or not (a 404 too): the security
 * headers, and errors as pages.
 */
export function portalFrame(deps: PortalDeps, assets: PortalAssets, ready: Promise<void>) {
  const headers = portalHeaders(deps.config.trustProxy);
  const errors = pageErrors(assets);
  return async (ctx: Context, next: Next): Promise<void> => {
    if (ctx.path !== '/portal' && !ctx.path.startsWith('/portal/')) return next();
    await ready;
    await headers(ctx, () => errors(ctx, next));
  };
}

/** The API's refusals (and the portal's own) as a page with the same status and the API's words. */
function pageErrors(assets: PortalAssets) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) throw new ApiRefusal(404, { code: 'not_found', detail: 'There is no portal page here.' }, null);
    } catch (err) {
      const refusal = err instanceof ApiRefusal ? err : err instanceof ApiError ? new ApiRefusal(err.status, { code: err.code, detail: err.message }, null) : null;
      if (!refusal) throw err;
      if (refusal.retryAfter) ctx.set('Retry-After', refusal.retryAfter);
      renderPage(ctx, assets, 'error', { title: titleOf(refusal.status), status: refusal.status, code: refusal.problem.code ?? null, detail: refusal.problem.detail ?? refusal.message, noWindow: true, bare: true }, refusal.status);
    }
  };
}

function titleOf(status: number): string {
  if (status === 403) return 'Not yours to see';
  if (status === 404) return 'Not found';
  if (status === 400) return 'Invalid request';
  if (status === 429 || status === 503) return 'Busy: try again shortly';
  return 'Something went wrong';
}
