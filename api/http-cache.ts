// Conditional GETs of snapshot data: every body is serialised once per snapshot with a strong
// ETag (docs/architecture.md: no hashing or serialising per request), and Last-Modified is the asOf.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { CachedBody, ServedSnapshot } from '../served/snapshot-store.ts';
import { countResponseLookup } from './metrics.ts';

function etagFor(snapshotId: string, key: string): string {
  return `"${createHash('sha1').update(snapshotId).update('\0').update(key).digest('base64url').slice(0, 22)}"`;
}

/** Whether an If-None-Match header matches an ETag (weak comparison, RFC 9110 §13.1.2). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}

/** Whether the request's If-None-Match names `etag` (any of a list, weak or strong, or `*`): answer 304. */
export function notModified(ctx: Context, etag: string): boolean {
  return etagMatches(ctx.req.headers['if-none-match'], etag);
}

/**
 * Set the freshness headers of snapshot data: ETag, Last-Modified (= asOf), private caching. Set
 * on Node's response directly (the values are plain strings): Koa's `ctx.set` allocates arrays
 * and closures on every call, which showed in the hot routes' profile.
 */
export function setSnapshotHeaders(ctx: Context, snap: ServedSnapshot, etag: string): void {
  snapshotHeaders(ctx.res, snap, etag);
}

function snapshotHeaders(res: ServerResponse, snap: ServedSnapshot, etag: string): void {
  res.setHeader('ETag', etag);
  res.setHeader('Last-Modified', snap.lastModified);
  res.setHeader('Cache-Control', 'private, no-cache');
}

/**
 * Answer with the JSON body cached under `key` for this snapshot (built by `build` the first
 * time), or 304 when the client already has it.
 */
export function sendSnapshotJson(ctx: Context, snap: ServedSnapshot, key: string, build: () => unknown): void {
  let cached: CachedBody | undefined = snap.responses.get(key);
  countResponseLookup(cached !== undefined);
  if (!cached) {
    cached = serialise(snap, key, build());
    snap.responses.set(key, cached);
  }
  ctx.state['responseKey'] = key;
  sendCached(ctx, snap, cached);
}

/**
 * `sendSnapshotJson` for bodies read on demand, `build` giving the JSON text or bytes: concurrent first
 * requests share one build.
 */
export async function sendSnapshotJsonText(ctx: Context, snap: ServedSnapshot, key: string, build: () => Promise<string | Buffer>): Promise<void> {
  const cached =
    snap.responses.get(key) ?? (await snap.responses.getOrBuild(key, async () => {
      const body = await build();
      return { body: typeof body === 'string' ? Buffer.from(body) : body, etag: etagFor(snap.id, key) };
    }));
  ctx.state['responseKey'] = key;
  sendCached(ctx, snap, cached);
}

function serialise(snap: ServedSnapshot, key: string, value: unknown): CachedBody {
  return { body: Buffer.from(JSON.stringify(value)), etag: etagFor(snap.id, key) };
}

/**
 * The head of a cached body's answer, set on Node's response (its validators, and for a 200 its
 * Content-Type; the body is the caller's to send), and its status: 304 when the request's
 * If-None-Match names it, else 200. One definition for the routed answer (`sendCached`) and the
 * replayed one (api/replayed-answers.ts), which must be the same.
 */
export function cachedAnswerHead(req: IncomingMessage, res: ServerResponse, snap: ServedSnapshot, cached: CachedBody): 200 | 304 {
  snapshotHeaders(res, snap, cached.etag);
  if (etagMatches(req.headers['if-none-match'], cached.etag)) return 304;
  // The header itself: Koa's `type` setter looks the media type up on every call.
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  return 200;
}

/** The answer of a cached body: its headers, and 304 or the body. */
export function sendCached(ctx: Context, snap: ServedSnapshot, cached: CachedBody): void {
  // Koa's response itself, not ctx's delegating accessors: this runs on every hot-route answer.
  const response = ctx.response;
  const status = cachedAnswerHead(ctx.req, ctx.res, snap, cached);
  response.status = status;
  if (status === 200) response.body = cached.body;
}

export function snapshotEtag(snap: ServedSnapshot, key: string): string {
  return etagFor(snap.id, key);
}
