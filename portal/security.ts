// What every portal response carries and every state-changing request must show: the security
// headers (a CSP that allows our own script and stylesheet only), the session and sign-in cookies
// (HttpOnly, SameSite=Strict, Path=/portal, Secure over TLS or behind a trusted proxy), and the
// same-origin and CSRF checks of a form post.
import { timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import getRawBody from 'raw-body';
import querystring from 'node:querystring';

export const SESSION_COOKIE = 'p2ptel_portal';
/** The sign-in form's CSRF value before any session exists (double submit: cookie and field). */
export const LOGIN_CSRF_COOKIE = 'p2ptel_portal_login';

/** No inline script or style anywhere: our own files, nothing else, never in a frame. */
export const PORTAL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function portalHeaders(trustProxy: boolean) {
  return async (ctx: Context, next: Next): Promise<void> => {
    ctx.set('Content-Security-Policy', PORTAL_CSP);
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
    ctx.cookies.secure = isSecure(ctx, trustProxy);
    await next();
  };
}

/** Whether the browser reached us over TLS: the API's own, or a trusted proxy's word for it. */
export function isSecure(ctx: Context, trustProxy: boolean): boolean {
  if ((ctx.req.socket as { encrypted?: boolean }).encrypted) return true;
  return trustProxy && String(ctx.get('X-Forwarded-Proto')).split(',')[0]!.trim().toLowerCase() === 'https';
}

export function setCookie(ctx: Context, name: string, value: string, path: string, maxAgeMs?: number): void {
  ctx.cookies.set(name, value, {
    httpOnly: true,
    sameSite: 'strict',
    path,
    secure: ctx.cookies.secure,
    overwrite: true,
    ...(maxAgeMs !== undefined ? { maxAge: maxAgeMs } : {}),
  });
}

export function clearCookie(ctx: Context, name: string, path: string): void {
  ctx.cookies.set(name, '', { httpOnly: true, sameSite: 'strict', path, secure: ctx.cookies.secure, overwrite: true, maxAge: 0, expires: new Date(0) });
}

/** Whether the request's Origin header names this very host (scheme, host and port). */
export function sameOrigin(ctx: Context, trustProxy: boolean): boolean {
  const origin = ctx.get('Origin');
  if (!origin) return false;
  const scheme = isSecure(ctx, trustProxy) ? 'https' : 'http';
  return origin === `${scheme}://${ctx.get('Host')}`;
}

export function sameSecret(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A form post's body: urlencoded, at most 16 KiB; anything else is an empty form (refused by its checks). */
export async function readForm(ctx: Context): Promise<Record<string, string | string[]>> {
  const type = (ctx.get('Content-Type') || '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return {};
  try {
    const text = await getRawBody(ctx.req, { limit: 16 * 1024, encoding: 'utf8' });
    return querystring.parse(text) as Record<string, string | string[]>;
  } catch {
    return {};
  }
}

/** One field of a form: its first value, or ''. */
export function field(form: Record<string, string | string[]>, name: string): string {
  const v = Object.hasOwn(form, name) ? form[name] : undefined;
  return (Array.isArray(v) ? v[0] : v) ?? '';
}
