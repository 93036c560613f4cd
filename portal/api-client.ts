// The portal reads every figure from the JSON API itself, with the session's token, over loopback:
// the same routes, scoping, limits, caches and ETags as a tenant's own code, so that a page can
// never show a figure the API would not (docs/architecture.md principle 11). Nothing here queries the
// warehouse. Telemetry answers are kept per caller and snapshot, so that a page shown again at the
// same snapshot costs no request (getAtSnapshot).
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import { Readable as NodeReadable } from 'node:stream';
import { SharedWork } from './shared-work.ts';

export interface ApiAnswer<T> {
  status: number;
  /** The parsed JSON body (a problem+json body on errors). */
  body: T;
  headers: Headers;
}

/** An answer that is not 2xx, carried to the portal's error page with the API's own problem. */
export class ApiRefusal extends Error {
  override name = 'ApiRefusal';
  constructor(
    readonly status: number,
    readonly problem: { code?: string; title?: string; detail?: string; errors?: unknown },
    readonly retryAfter: string | null,
  ) {
    super(problem.detail ?? problem.title ?? `status ${status}`);
  }
}

/** Bytes of telemetry answers the portal keeps for repeats at the same snapshot (PortalApi.getAtSnapshot). */
const SNAPSHOT_ANSWERS_BYTES = 32 * 2 ** 20;
/**
 * The snapshots whose answers are kept: the one served and the one before it (a page that started
 * just before a swap still reads at it). A page starts at the served snapshot, so older answers can
 * never be asked for again: they are dropped rather than left to fill the cache (live pages make a
 * new set of answers at every swap, every few seconds).
 */
const SNAPSHOTS_KEPT = 2;

export class PortalApi {
  private base: string | null = null;
  /** Parsed answers by caller (a hash of its token), snapshot and path: see getAtSnapshot. */
  private readonly atSnapshot = new LRUCache<string, { body: unknown }>({ maxSize: SNAPSHOT_ANSWERS_BYTES });
  /** Answers with their ETag by caller and path: see getRevalidated. */
  private readonly revalidated = new LRUCache<string, { etag: string; body: unknown }>({ maxSize: SNAPSHOT_ANSWERS_BYTES });
  /** Telemetry reads in flight by the same key as atSnapshot: concurrent pages share one request and one parsed answer. */
  readonly inFlight = new SharedWork();
  /** The snapshots atSnapshot holds answers of, oldest first (at most SNAPSHOTS_KEPT). */
  private readonly keptSnapshots: string[] = [];
  /** The snapshots whose answers were dropped (the last few hundred ids). */
  private readonly droppedSnapshots = new LRUCache<string, true>({ max: 256 });

  /** Where the API listens, once it does (startApi sets it). */
  listening(url: string): void {
    this.base = loopbackUrl(url);
  }

  /** GET a JSON route; a non-2xx answer throws ApiRefusal. */
  async get<T>(path: string, token: string, signal?: AbortSignal): Promise<T> {
    const a = await this.request<T>('GET', path, token, undefined, signal);
    if (a.status < 200 || a.status > 299) throw refusalOf(a);
    return a.body;
  }

  /**
   * GET a telemetry route whose answer depends on nothing but the caller, the URL and the snapshot
   * (the API's own rule for the answers it replays: api/replayed-answers.ts), once per caller,
   * path and served snapshot: a repeat while the same snapshot is served is the answer the API
   * gave; pages that ask while the request is in flight wait for it (one request, one parsed
   * answer). A page request still checks its session and revocation first (sign-in.ts); the answers
   * are read-only (pages copy what they change).
   */
  async getAtSnapshot<T>(path: string, token: string, snapshotId: string, signal?: AbortSignal): Promise<T> {
    const key = `${createHash('sha256').update(token).digest('base64url')}|${snapshotId}|${path}`;
    const kept = this.keepSnapshot(snapshotId);
    const hit = this.atSnapshot.get(key);
    if (hit) return hit.body as T;
    return this.inFlight.run(key, signal, async (shared) => {
      const a = await this.request<T>('GET', path, token, undefined, shared);
      if (a.status < 200 || a.status > 299) throw refusalOf(a);
      if (kept && this.keptSnapshots.includes(snapshotId)) this.atSnapshot.set(key, { body: a.body }, { size: 256 + key.length + Number(a.headers.get('content-length') ?? JSON.stringify(a.body).length) });
      return a.body;
    });
  }

  /** A snapshot's answers are kept; those of the snapshots before the last SNAPSHOTS_KEPT are dropped. */
  private keepSnapshot(snapshotId: string): boolean {
    if (this.keptSnapshots.includes(snapshotId)) return true;
    // A page that started before two swaps reads at a dropped snapshot: its answers are not kept.
    if (this.droppedSnapshots.has(snapshotId)) return false;
    this.keptSnapshots.push(snapshotId);
    const dropped = new Set(this.keptSnapshots.splice(0, Math.max(0, this.keptSnapshots.length - SNAPSHOTS_KEPT)));
    for (const id of dropped) this.droppedSnapshots.set(id, true);
    if (dropped.size > 0) for (const key of [...this.atSnapshot.keys()]) if (dropped.has(key.split('|')[1]!)) this.atSnapshot.delete(key);
    return true;
  }

  /** How many answers are kept (for tests). */
  get keptAnswers(): number {
    return this.atSnapshot.size;
  }

  /**
   * GET a route that sends ETags (a pilot report), revalidated: the caller's last answer for the path
   * is sent back as If-None-Match, and a 304 reuses it, unparsed again (a report's JSON is large).
   */
  async getRevalidated<T>(path: string, token: string, signal?: AbortSignal): Promise<T> {
    const key = `${createHash('sha256').update(token).digest('base64url')}|${path}`;
    const held = this.revalidated.get(key);
    const a = await this.request<T>('GET', path, token, undefined, signal, held ? { 'If-None-Match': held.etag } : {});
    if (a.status === 304 && held) return held.body as T;
    if (a.status < 200 || a.status > 299) throw refusalOf(a);
    const etag = a.headers.get('etag');
    if (etag) this.revalidated.set(key, { etag, body: a.body }, { size: 256 + key.length + Number(a.headers.get('content-length') ?? 0) });
    return a.body;
  }

  /** Any JSON request, its answer whatever the status (the origins form shows a 400's reasons). */
  async request<T>(method: string, path: string, token: string, body?: unknown, signal?: AbortSignal, headers: Record<string, string> = {}): Promise<ApiAnswer<T>> {
    const res = await fetch(this.url(path), {
      method,
      headers: { ...headers, Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(signal ? { signal } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : null) as T };
  }

  /** A download passed through as it streams (exports, report files): its status, headers and body. */
  async stream(path: string, token: string, signal?: AbortSignal): Promise<{ status: number; headers: Headers; body: Readable | null }> {
    const res = await fetch(this.url(path), { headers: { Authorization: `Bearer ${token}` }, ...(signal ? { signal } : {}) });
    return { status: res.status, headers: res.headers, body: res.body ? NodeReadable.fromWeb(res.body as import('node:stream/web').ReadableStream) : null };
  }

  private url(path: string): string {
    if (this.base === null) throw new Error('the portal reads the API before it listens');
    return `${this.base}${path}`;
  }
}

function refusalOf(a: ApiAnswer<unknown>): ApiRefusal {
  const problem = (a.body && typeof a.body === 'object' ? a.body : {}) as ApiRefusal['problem'];
  return new ApiRefusal(a.status, problem, a.headers.get('retry-after'));
}

/** The API's own URL as a loopback client reaches it: an unspecified address becomes loopback. */
export function loopbackUrl(url: string): string {
  const u = new URL(url);
  if (u.hostname === '0.0.0.0') u.hostname = '127.0.0.1';
  if (u.hostname === '[::]') u.hostname = '[::1]';
  return u.origin;
}
