// The rules of content origins (docs/api.md, "Origins"): what an allowlist entry may be, its
// normalised form, and whether a manifest URL falls under an entry. Pure functions, shared by the
// API, the platform configuration and the tests.

export const MAX_ORIGIN_LENGTH = 2048;
export const MAX_ORIGINS = 500;

export interface OriginProblem {
  /** Position in the submitted list; null for a problem of the list as a whole. */
  index: number | null;
  value: unknown;
  reason: string;
}

export type OriginCheck = { ok: true; origin: string } | { ok: false; reason: string };

/**
 * Check one entry and give its normalised form: lower-case scheme and host (IDN hosts in their
 * ASCII form), default port dropped, dot segments resolved, no trailing slash (the root is no path
 * at all), so that equal origins compare equal.
 */
export function normaliseOrigin(value: unknown): OriginCheck {
  if (typeof value !== 'string') return { ok: false, reason: `must be a string, not ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}` };
  if (value.length === 0) return { ok: false, reason: 'is empty' };
  if (value.length > MAX_ORIGIN_LENGTH) return { ok: false, reason: `is longer than ${MAX_ORIGIN_LENGTH} characters (${value.length})` };
  if (value.trim() !== value) return { ok: false, reason: 'has surrounding white space' };
  if (!/^https?:\/\//i.test(value)) return { ok: false, reason: 'must be an absolute http:// or https:// URL' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: 'is not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: 'must be an absolute http:// or https:// URL' };
  if (url.hostname === '') return { ok: false, reason: 'has no host' };
  if (url.port === '0') return { ok: false, reason: 'port 0 is not a port' };
  if (url.username !== '' || url.password !== '' || /^https?:\/\/[^/]*@/i.test(value)) return { ok: false, reason: 'must not carry credentials' };
  if (url.search !== '' || value.includes('?')) return { ok: false, reason: 'must not have a query' };
  if (url.hash !== '' || value.includes('#')) return { ok: false, reason: 'must not have a fragment' };
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return { ok: true, origin: `${url.protocol}//${url.host}${path}` };
}

/**
 * Validate a submitted list: every problem, each with its index, value and reason, or the
 * normalised, de-duplicated list in the order given.
 */
export function validateOrigins(list: unknown): { ok: true; origins: string[] } | { ok: false; problems: OriginProblem[] } {
  if (!Array.isArray(list)) return { ok: false, problems: [{ index: null, value: list, reason: 'origins must be an array of URLs' }] };
  const problems: OriginProblem[] = [];
  if (list.length > MAX_ORIGINS) problems.push({ index: null, value: list.length, reason: `at most ${MAX_ORIGINS} entries (got ${list.length})` });
  const origins: string[] = [];
  const seen = new Set<string>();
  list.forEach((value, index) => {
    const r = normaliseOrigin(value);
    if (!r.ok) {
      problems.push({ index, value: typeof value === 'string' && value.length > 200 ? `${value.slice(0, 200)}…` : value, reason: r.reason });
    } else if (!seen.has(r.origin)) {
      seen.add(r.origin);
      origins.push(r.origin);
    }
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, origins };
}

export type ManifestUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * A URL that may be signed at all: absolute http(s), with a host and without credentials, and
 * without what parsers read differently (an encoded `/` or `\`, a backslash, white space or a
 * control character), so that the URL the allowlist checked is the one every client fetches. What
 * is signed is its normalised form (`url.href`), never the string as sent.
 */
export function checkManifestUrl(value: unknown): ManifestUrlCheck {
  if (typeof value !== 'string' || value.length === 0) return { ok: false, reason: 'url must be a non-empty string' };
  if (value.length > 8192) return { ok: false, reason: 'url is longer than 8192 characters' };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: 'url is not a valid absolute URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: 'url must be http:// or https://' };
  if (url.hostname === '') return { ok: false, reason: 'url has no host' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'url must not carry credentials' };
  if (/%2f|%5c/i.test(value)) return { ok: false, reason: 'url must not contain an encoded / or \\ (%2F, %5C)' };
  if (value.includes('\\')) return { ok: false, reason: 'url must not contain a backslash' };
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f-\u009f]/u.test(value)) return { ok: false, reason: 'url must not contain white space or control characters' };
  return { ok: true, url };
}

/**
 * Whether a manifest URL falls under an allowlist: the same scheme, host and port as an entry,
 * and a path that is the entry's path or continues it at a `/` boundary.
 */
export function urlAllowed(url: URL, allowlist: readonly string[]): boolean {
  for (const entry of allowlist) {
    const e = new URL(entry);
    if (e.protocol !== url.protocol || e.host !== url.host) continue;
    const base = e.pathname === '/' ? '' : e.pathname;
    if (base === '' || url.pathname === base || url.pathname.startsWith(`${base}/`)) return true;
  }
  return false;
}
