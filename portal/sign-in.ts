// Signing in and out of the portal: the form (a token pasted, or the one-time code of a printed
// link, read by the page's script from the link's #fragment so that it reaches no log), the checks
// of every post (same Origin, CSRF), the session cookie, and the middleware that admits a request
// to the pages only with a live session whose token is still accepted.
import type { Context, Next } from 'koa';
import type { Router } from '@koa/router';
import { TokenVerifyError, verifyToken, type Caller } from '../api/tokens.ts';
import { credentialOf, refusalMessage } from '../api/auth.ts';
import { clearCookie, field, LOGIN_CSRF_COOKIE, readForm, sameOrigin, sameSecret, SESSION_COOKIE, setCookie } from './security.ts';
import { randomSecret, type PortalSession } from './sessions.ts';
import { renderPage } from './render.ts';
import type { PortalDeps } from './deps.ts';
import type { PortalAssets } from './assets.ts';

const LOGIN_PATH = '/portal/login';

/** Why a session ended, as the sign-in page says it (by the `ended` query value). */
const ENDED: Record<string, string> = {
  signed_out: 'You are signed out.',
  revoked: 'Your session ended: its token was revoked or its tenant removed.',
  expired: 'Your session ended: its token expired. Sign in with a new one.',
};

export function signInRoutes(router: Router, deps: PortalDeps, assets: PortalAssets): void {
  router.get('/login', (ctx) => showForm(ctx, deps, assets, null, 200));
  router.post('/login', (ctx) => signIn(ctx, deps, assets));
  router.post('/logout', requireSession(deps), (ctx) => signOut(ctx, deps));
}

function showForm(ctx: Context, deps: PortalDeps, assets: PortalAssets, error: string | null, status: number): void {
  // One value per browser, kept across forms: two sign-in tabs of one browser (or a page sent back
  // to the form while another tab signs in) do not expire each other's form.
  const kept = ctx.cookies.get(LOGIN_CSRF_COOKIE);
  const csrf = kept && /^[A-Za-z0-9_-]{43}$/.test(kept) ? kept : randomSecret();
  setCookie(ctx, LOGIN_CSRF_COOKIE, csrf, LOGIN_PATH);
  const ended = typeof ctx.query['ended'] === 'string' && Object.hasOwn(ENDED, ctx.query['ended']) ? ENDED[ctx.query['ended']] : null;
  // Not a live page: the sign-in form opens no event stream (noWindow).
  renderPage(ctx, assets, 'login', { csrf, error, notice: error ? null : ended, title: 'Sign in', noWindow: true }, status);
}

async function signIn(ctx: Context, deps: PortalDeps, assets: PortalAssets): Promise<void> {
  const form = await readForm(ctx);
  if (!sameOrigin(ctx, deps.config.trustProxy) || !sameSecret(field(form, 'csrf'), ctx.cookies.get(LOGIN_CSRF_COOKIE))) {
    return showForm(ctx, deps, assets, 'The form expired or came from another site: sign in again.', 403);
  }
  const address = ctx.req.socket.remoteAddress ?? 'unknown';
  const wait = deps.throttle.retryAfterSeconds(address);
  if (wait > 0) {
    ctx.set('Retry-After', String(wait));
    return showForm(ctx, deps, assets, `Too many refused sign-ins from your address: try again in ${wait} s.`, 429);
  }
  const opened = await verifyCredential(deps, field(form, 'token').trim(), field(form, 'code').trim());
  if ('error' in opened) {
    deps.throttle.refused(address);
    return showForm(ctx, deps, assets, opened.error, 401);
  }
  const id = deps.sessions.open(opened.token, opened.caller);
  setCookie(ctx, SESSION_COOKIE, id, '/portal', opened.caller.expiresAt * 1000 - Date.now());
  deps.log.info({ reqId: ctx.state['reqId'], role: opened.caller.role, tokenId: opened.caller.tokenId, link: field(form, 'code') !== '' }, 'portal sign-in');
  ctx.status = 303;
  ctx.redirect('/portal/');
}

/** The token and caller a form names (a pasted token, or a link's code), or why it is refused. */
async function verifyCredential(deps: PortalDeps, token: string, code: string): Promise<{ token: string; caller: Caller } | { error: string }> {
  if (code !== '') return deps.sessions.redeemLink(code) ?? { error: 'This sign-in link was used already or has expired: ask for a new one, or paste a token.' };
  if (token === '') return { error: 'Paste an API token.' };
  let caller: Caller;
  try {
    caller = await verifyToken(deps.secret, token);
  } catch (err) {
    if (err instanceof TokenVerifyError) return { error: err.reason === 'expired' ? 'This token has expired.' : 'This is not a valid API token.' };
    throw err;
  }
  const refusal = await deps.revocation.refusalLookingAgain(credentialOf(caller));
  if (refusal) return { error: refusalMessage(refusal) };
  return { token, caller };
}

async function signOut(ctx: Context, deps: PortalDeps): Promise<void> {
  deps.sessions.end(ctx.cookies.get(SESSION_COOKIE));
  clearCookie(ctx, SESSION_COOKIE, '/portal');
  ctx.status = 303;
  ctx.redirect(`${LOGIN_PATH}?ended=signed_out`);
}

/** The request's session, set by requireSession. */
export function sessionOf(ctx: Context): PortalSession {
  return ctx.state['portalSession'] as PortalSession;
}

/**
 * Admits a request with a live session whose token revocation does not refuse; a post must also
 * come from our own origin with the session's CSRF value. Otherwise a page goes to the sign-in form
 * (saying why), and a script's request (a fragment, the event stream) gets 401.
 */
export function requireSession(deps: PortalDeps) {
  return async (ctx: Context, next: Next): Promise<void> => {
    const id = ctx.cookies.get(SESSION_COOKIE);
    const found = deps.sessions.lookup(id);
    if (!('session' in found)) return notSignedIn(ctx, found.none === 'expired' ? 'expired' : null, found.none !== 'no_cookie');
    const { session } = found;
    if (deps.revocation.refusal(credentialOf(session.caller))) {
      deps.sessions.end(id);
      return notSignedIn(ctx, 'revoked', true);
    }
    if (ctx.method === 'POST') {
      const form = await readForm(ctx);
      if (!sameOrigin(ctx, deps.config.trustProxy) || !sameSecret(field(form, 'csrf'), session.csrf)) {
        ctx.status = 403;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = 'Refused: this form did not come from the portal (Origin or CSRF check failed). Reload the page and try again.';
        return;
      }
      ctx.state['form'] = form;
    }
    ctx.state['portalSession'] = session;
    await next();
  };
}

/**
 * Sends a request without a live session to the form (a script's request: 401). The cookie is
 * cleared only when the request carried one: a request sent before a sign-in and answered after it
 * must not clear the session that sign-in just set.
 */
function notSignedIn(ctx: Context, ended: 'revoked' | 'expired' | null, hadCookie: boolean): void {
  if (hadCookie) clearCookie(ctx, SESSION_COOKIE, '/portal');
  if (ctx.get('X-Portal-Fragment') || ctx.path === '/portal/events') {
    ctx.status = 401;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = 'signed out';
    return;
  }
  ctx.status = 303;
  ctx.redirect(`${LOGIN_PATH}${ended ? `?ended=${ended}` : ''}`);
}
