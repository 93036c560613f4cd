// Portal sessions: a random id in an HttpOnly cookie names a session held in the API process, which
// keeps the API token it was opened with (never sent back to the browser). A session ends at the
// token's expiry, at sign-out, or when revocation refuses its token. One-time sign-in links (the
// one `start` prints) are codes that open one session each, within minutes.
import { createHash, randomBytes } from 'node:crypto';
import type { Caller } from '../api/tokens.ts';

export interface PortalSession {
  /** The API token the session calls the API with (server side only). */
  token: string;
  caller: Caller;
  /** The CSRF token of the session's forms. */
  csrf: string;
  /** When the token, and so the session, expires (ms since the epoch). */
  expiresAtMs: number;
}

interface PendingLink {
  token: string;
  caller: Caller;
  expiresAtMs: number;
}

/** A random value for a cookie, a CSRF field or a link: 32 bytes, base64url. */
export function randomSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Sessions are kept under a hash of their id: what the process holds cannot be replayed as a cookie. */
const keyOf = (secret: string) => createHash('sha256').update(secret).digest('base64url');

export class PortalSessions {
  private readonly sessions = new Map<string, PortalSession>();
  private readonly links = new Map<string, PendingLink>();

  constructor(
    private readonly max: number,
    private readonly linkTtlMs: number,
  ) {}

  /** Opens a session for a verified token; returns the id to set as the cookie. */
  open(token: string, caller: Caller): string {
    const id = randomSecret();
    if (this.sessions.size >= this.max) this.sessions.delete(this.sessions.keys().next().value!);
    this.sessions.set(keyOf(id), { token, caller, csrf: randomSecret(), expiresAtMs: caller.expiresAt * 1000 });
    return id;
  }

  /** The live session of a cookie value, or null (unknown, or expired: then forgotten). */
  get(id: string | undefined, nowMs = Date.now()): PortalSession | null {
    const found = this.lookup(id, nowMs);
    return 'session' in found ? found.session : null;
  }

  /** The live session of a cookie value, or why there is none: no cookie, unknown (ended, or another process's), or expired now. */
  lookup(id: string | undefined, nowMs = Date.now()): { session: PortalSession } | { none: 'no_cookie' | 'unknown' | 'expired' } {
    if (!id) return { none: 'no_cookie' };
    const key = keyOf(id);
    const s = this.sessions.get(key);
    if (!s) return { none: 'unknown' };
    if (s.expiresAtMs <= nowMs) {
      this.sessions.delete(key);
      return { none: 'expired' };
    }
    return { session: s };
  }

  end(id: string | undefined): void {
    if (id) this.sessions.delete(keyOf(id));
  }

  /** A one-time code that opens a session for this token within the link's lifetime. */
  issueLink(token: string, caller: Caller, nowMs = Date.now()): string {
    this.dropExpiredLinks(nowMs);
    const code = randomSecret();
    this.links.set(keyOf(code), { token, caller, expiresAtMs: Math.min(nowMs + this.linkTtlMs, caller.expiresAt * 1000) });
    return code;
  }

  /** The token and caller of a link's code, once: a second use, or one after its lifetime, is null. */
  redeemLink(code: string, nowMs = Date.now()): { token: string; caller: Caller } | null {
    const key = keyOf(code);
    const link = this.links.get(key);
    this.links.delete(key);
    if (!link || link.expiresAtMs <= nowMs) return null;
    return { token: link.token, caller: link.caller };
  }

  /** Open sessions (for /metrics and tests). */
  get size(): number {
    return this.sessions.size;
  }

  private dropExpiredLinks(nowMs: number): void {
    for (const [k, l] of this.links) if (l.expiresAtMs <= nowMs) this.links.delete(k);
  }
}
