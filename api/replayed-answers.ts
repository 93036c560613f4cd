// Replayed answers. A client that repeats a GET it was answered before, with the same token, on
// the same snapshot (a dashboard polling its figures), is answered again from a memo of that
// answer, before the routers: no route matching, no query parsing, no handler. What makes this
// sound is that the routes that opt in (`remember`) answer from nothing but the caller, the URL
// and the snapshot: their checks (capability, stream scope, a known stream) and their body are the
// same for the same token and URL on the same snapshot. What can change for the same token is
// checked on every replay, as the token middleware checks it: expiry and revocation (TokenAuth's
// `remembered`). The frame around it is the same as for any request (request id, log line,
// metrics, errors), and so is the answer (`sendCached`: the headers, 304 on If-None-Match).
//
// The memo holds the response cache's key, not the body: a body the cache has evicted sends the
// request on to the routers, so memory stays bounded by API_RESPONSE_CACHE_MB, plus the memo's
// entries (API_REPLAY_ENTRIES, a few hundred bytes each: the Authorization header and the URL, at
// most MAX_REPLAY_URL_CHARS).
// Entries of an older snapshot are not replayed; the next answer at the same key replaces them.
import type { Context, Next } from 'koa';
import type { TokenAuth } from './auth.ts';
import { sendCached } from './http-cache.ts';
import { countReplayLookup, countResponseLookup } from './metrics.ts';
import { currentSnapshot } from './request-context.ts';

interface Replay {
  snapshotId: string;
  /** The response cache key of the answer. */
  key: string;
  /** The route template the router matched (the request metrics' label). */
  route: string;
}

type RoutedContext = Context & { _matchedRoute?: string | RegExp };

/**
 * Longest URL remembered. A dashboard's polling URL is well under it; without it a token could
 * fill the memo with URLs padded up to Node's 16 KiB header limit (unknown query parameters and
 * empty `&` pairs are accepted), and an entry would no longer be a few hundred bytes.
 */
export const MAX_REPLAY_URL_CHARS = 512;

export class Replays {
  /**
   * By Authorization header, then URL (two lookups of strings Node already has, rather than one of
   * a string built per request). When full, the token remembered longest ago goes with its
   * entries: one in use comes back at its next routed answer.
   */
  private readonly memo: Map<string, Map<string, Replay>> | null;
  private entries = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly auth: Pick<TokenAuth, 'remembered'>,
  ) {
    this.memo = maxEntries > 0 ? new Map() : null;
  }

  /**
   * Route middleware: remember the answer of this route (200 or 304 from the response cache) for
   * the token and URL that got it. Only for routes whose answer depends on nothing but the caller,
   * the URL and the snapshot.
   */
  readonly remember = async (ctx: Context, next: Next): Promise<void> => {
    await next();
    const key = ctx.state['responseKey'];
    const header = ctx.req.headers.authorization;
    const snap = currentSnapshot(ctx);
    const route = (ctx as RoutedContext)._matchedRoute;
    if (this.memo === null || ctx.method !== 'GET' || (ctx.status !== 200 && ctx.status !== 304)) return;
    if (typeof key !== 'string' || !header || !snap || typeof route !== 'string' || ctx.url.length > MAX_REPLAY_URL_CHARS) return;
    let urls = this.memo.get(header);
    if (urls?.has(ctx.url) !== true) {
      while (this.entries >= this.maxEntries) {
        const [oldest, gone] = this.memo.entries().next().value!;
        this.memo.delete(oldest);
        this.entries -= gone.size;
      }
      this.entries++;
    }
    if (!this.memo.has(header)) this.memo.set(header, (urls = new Map()));
    urls!.set(ctx.url, { snapshotId: snap.id, key, route });
  };

  /** App middleware, after the request frame and before the routers: answer a repeat from the memo. */
  readonly replay = async (ctx: Context, next: Next): Promise<void> => {
    const req = ctx.req;
    const header = req.headers.authorization;
    if (this.memo !== null && req.method === 'GET' && header) {
      const r = this.memo.get(header)?.get(req.url!);
      const snap = currentSnapshot(ctx);
      const cached = r && snap && r.snapshotId === snap.id ? snap.responses.get(r.key) : undefined;
      const caller = cached ? this.auth.remembered(req) : null;
      countReplayLookup(caller !== null);
      if (caller !== null) {
        countResponseLookup(true);
        ctx.state['caller'] = caller;
        (ctx as RoutedContext)._matchedRoute = r!.route;
        sendCached(ctx, snap!, cached!);
        return;
      }
    }
    await next();
  };
}
