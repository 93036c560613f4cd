// One delivery attempt: a POST to the endpoint, connected to an address checked just before
// (target-check.ts; the lookup is pinned, so no second resolution can rebind it), a deadline for
// the whole attempt, no redirect followed (a 3xx is a failure), at most a few KB of the answer read.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { allowedAddresses, TargetForbidden } from './target-check.ts';

/** Bytes of an answer read at most (the rest is discarded). */
export const MAX_ANSWER_BYTES = 4096;

export interface Attempt {
  at: string;
  /** HTTP status, or null when no answer came (refused, timed out, forbidden target). */
  status: number | null;
  durationMs: number;
  error: string | null;
  /** Seconds the receiver asked to wait (Retry-After), if it said. */
  retryAfterSeconds: number | null;
}

export interface Outgoing {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export async function sendOnce(req: Outgoing, opts: { timeoutMs: number; allowPrivate: boolean }): Promise<Attempt> {
  const at = new Date().toISOString();
  const started = performance.now();
  const done = (status: number | null, error: string | null, retryAfterSeconds: number | null = null): Attempt => ({
    at, status, durationMs: Math.round(performance.now() - started), error, retryAfterSeconds,
  });
  const url = new URL(req.url);
  let addresses;
  try {
    addresses = await allowedAddresses(url, opts.allowPrivate);
  } catch (err) {
    return done(null, err instanceof TargetForbidden ? `forbidden target: ${err.message}` : `lookup failed: ${(err as Error).message}`);
  }
  const pinned = addresses[0]!;
  const lookup: LookupFunction = (_host, options, cb) => {
    if ((options as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
    else cb(null, pinned.address, pinned.family);
  };
  try {
    const { status, retryAfter } = await post(url, req, lookup, opts.timeoutMs);
    return done(status, status >= 200 && status < 300 ? null : `answered ${status}`, retryAfter);
  } catch (err) {
    return done(null, (err as Error).message);
  }
}

function post(url: URL, req: Outgoing, lookup: LookupFunction, timeoutMs: number): Promise<{ status: number; retryAfter: number | null }> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const r = client.request(url, {
      method: 'POST', lookup, signal: AbortSignal.timeout(timeoutMs), agent: false,
      headers: { ...req.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(req.body)), 'user-agent': 'p2ptel-webhooks/1' },
    }, (res) => {
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_ANSWER_BYTES) res.destroy();
      });
      const finish = () => resolve({ status: res.statusCode ?? 0, retryAfter: retryAfterSeconds(res.headers['retry-after']) });
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
    });
    r.on('error', (err) => reject(err.name === 'AbortError' || err.name === 'TimeoutError' ? new Error(`no answer within ${timeoutMs} ms`) : err));
    r.end(req.body);
  });
}

/** Retry-After in seconds: a number of seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterSeconds(value: string | undefined): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? Math.max(0, Math.ceil((ms - Date.now()) / 1000)) : null;
}
