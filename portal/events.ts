// The event stream of an open page (`GET /portal/events`, server-sent events): `snapshot` with the
// id and asOf of each snapshot the API swaps in (the page then fetches its <main> again, once), a
// comment every 15 s to keep proxies from closing it, and `signed-out` (then the end) when the
// session's token is revoked or expires. Each stream holds a place of the tenant's live pages.
import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import { credentialOf } from '../api/auth.ts';
import { sessionOf } from './sign-in.ts';
import { SESSION_COOKIE } from './security.ts';
import type { PortalDeps } from './deps.ts';
import type { ServedSnapshot } from '../served/snapshot-store.ts';

const HEARTBEAT_MS = 15_000;
/** How often an open stream checks that its session's token is still accepted. */
const SESSION_CHECK_MS = 1_000;

const snapshotEvent = (snap: ServedSnapshot) => `event: snapshot\ndata: ${JSON.stringify({ id: snap.id, asOf: snap.manifest.asOf })}\n\n`;

export function eventStream(ctx: Context, deps: PortalDeps): void {
  const session = sessionOf(ctx);
  const admittedAs = session.caller.role === 'tenant' ? session.caller.customerId : 'operator';
  const place = deps.livePages.admit(admittedAs);
  if (!place.ok) {
    ctx.status = 429;
    ctx.set('Retry-After', '30');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = `Too many open live pages (at most ${place.refusal.limit}); this page stops following new figures.`;
    return;
  }
  const out = new PassThrough();
  const current = deps.store.current();
  out.write(`retry: 2000\n\n${current ? snapshotEvent(current) : ''}`);
  const stopSwaps = deps.store.onSwap((snap) => out.write(snapshotEvent(snap)));
  const heartbeat = setInterval(() => out.write(': keep-alive\n\n'), HEARTBEAT_MS);
  const check = setInterval(() => {
    const ended = session.expiresAtMs <= Date.now() || deps.revocation.refusal(credentialOf(session.caller)) !== null;
    if (ended) {
      deps.sessions.end(ctx.cookies.get(SESSION_COOKIE));
      out.end('event: signed-out\ndata: {}\n\n');
    }
  }, SESSION_CHECK_MS);
  const release = () => {
    stopSwaps();
    clearInterval(heartbeat);
    clearInterval(check);
    place.release();
  };
  out.once('close', release);
  ctx.res.once('close', () => out.destroy());
  ctx.req.socket.setTimeout(0);
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.type = 'text/event-stream; charset=utf-8';
  ctx.status = 200;
  ctx.body = out;
}
