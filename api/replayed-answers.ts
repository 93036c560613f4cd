// Replayed answers: a GET repeated with the same token and URL on the same snapshot (a dashboard
// polling its figures) is answered again before Koa, with no context, middleware or routing. Sound
// because the routes that opt in (`remember`) answer from nothing but the caller, the URL and the
// snapshot; what can change for the same token (expiry, revocation) is checked on every replay
// (TokenAuth's `remembered`). The frame (lib/http/frame.ts) and the head (`cachedAnswerHead`) are
// the routed answer's own. Anything that is not a repeat goes to Koa as it came. docs/api.md,
// "Replayed answers", says what it saves and what bounds its memory.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Context, Next } from 'koa';
import type { TokenAuth } from './auth.ts';
import { cachedAnswerHead } from './http-cache.ts';
import { countReplayLookup, countResponseLookup } from './metrics.ts';
import { currentSnapshot, type FrameSnapshots } from './request-context.ts';
import { endFrame, requestLine, startFrame } from '../lib/http/frame.ts';
import { matchedRoute } from '../lib/http/metrics.ts';
import { requestLineWriter, type Logger } from '../lib/log.ts';

interface Replay {
  snapshotId: string;
  /** The response cache key of the answer. */
  key: string;
  /** The route template the router matched (the request metrics' label). */
  route: string;
}

/**
 * Longest URL remembered. A dashboard's polling URL is well under it; without it a token could
 * fill the memo with URLs padded up to Node's 16 KiB header limit (unknown query parameters and
 * empty `&` pairs are accepted), and an entry would no longer be a few hundred bytes.
 */
export const MAX_REPLAY_URL_CHARS = 512;

/**
 * URLs remembered: a path (and query) whose path is what precedes its `?`, as Koa reads it
 * (`ctx.request.path`, the log line's); a URL with a fragment or a space-like character, which Koa
 * parses another way, is never remembered (and is answered by the routers each time).
 */
const SIMPLE_URL = /^\/[^#\s\u00a0\ufeff]*$/;

/** The path of a remembered URL (SIMPLE_URL): what precedes its `?`. */
function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

export class Replays {
  /**
   * The answer's key in the response cache, by Authorization header, then URL (two lookups of
   * strings Node already has, rather than one of a string built per request): a body the cache
   * has evicted sends the request on to the routers. When full, the token remembered longest ago
   * goes with its entries: one in use comes back at its next routed answer. An entry of an older
   * snapshot is not replayed; the next answer at the same URL replaces it.
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
    const route = matchedRoute(ctx);
    if (this.memo === null || ctx.method !== 'GET' || (ctx.status !== 200 && ctx.status !== 304)) return;
    if (typeof key !== 'string' || !header || !snap || typeof route !== 'string' || ctx.url.length > MAX_REPLAY_URL_CHARS || !SIMPLE_URL.test(ctx.url)) return;
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

  /**
   * The server's request listener: a repeat is answered from the memo here, before Koa; anything
   * else goes to `koa` (the app's own listener) as it came.
   */
  listener(koa: RequestListener, store: FrameSnapshots, log: Logger): RequestListener {
    const writeLine = requestLineWriter(log);
    return (req, res) => {
      if (!this.answer(req, res, store, writeLine)) koa(req, res);
    };
  }

  /** Answer a repeat of a remembered GET, with the request frame's id, headers, metric and line; false when it is not one. */
  private answer(req: IncomingMessage, res: ServerResponse, store: FrameSnapshots, writeLine: ReturnType<typeof requestLineWriter>): boolean {
    const header = req.headers.authorization;
    if (this.memo === null || req.method !== 'GET' || !header) return false;
    const started = performance.now();
    const url = req.url!;
    const r = this.memo.get(header)?.get(url);
    const snap = r ? store.current() : null;
    const cached = r && snap && r.snapshotId === snap.id ? snap.responses.get(r.key) : undefined;
    const caller = cached ? this.auth.remembered(req) : null;
    countReplayLookup(caller !== null);
    if (caller === null) return false;
    countResponseLookup(true);
    // The frame's headers, the answer's, and for a 200 its length (as Koa sets it for a Buffer
    // body): the routed answer's, in its order.
    const reqId = startFrame(req, res);
    const status = cachedAnswerHead(req, res, snap!, cached!);
    res.statusCode = status;
    if (status === 200) {
      res.setHeader('Content-Length', String(cached!.body.length));
      res.end(cached!.body);
    } else {
      res.end();
    }
    const ms = performance.now() - started;
    endFrame(writeLine, r!.route, requestLine(reqId, 'GET', pathOf(url), status, ms, caller), ms);
    return true;
  }
}
