// Query parameters of the API, validated at the edge (api-decisions.md: a bad window,
// bucketSeconds, format or detail is a 400 naming the parameter).
import querystring, { type ParsedUrlQuery } from 'node:querystring';
import type { Context } from 'koa';
import { problems } from './errors.ts';
import {
  DEFAULT_BUCKET_SECONDS,
  DEFAULT_WINDOW,
  isWindowName,
  MAX_BUCKET_SECONDS,
  MIN_BUCKET_SECONDS,
  WINDOW_NAMES,
  type WindowName,
} from '../warehouse/windows.ts';

/** The request's query parameters, parsed once (node:querystring is several times faster than Koa's getter). */
export function queryOf(ctx: Context): ParsedUrlQuery {
  let q = ctx.state['query'] as ParsedUrlQuery | undefined;
  if (!q) {
    q = querystring.parse(ctx.querystring);
    ctx.state['query'] = q;
  }
  return q;
}

/** One value of a query parameter: repeated parameters are refused rather than guessed at. */
function single(query: ParsedUrlQuery, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) throw problems.invalidQuery(`invalid_${snake(name)}`, `${name} is given more than once.`, { parameter: name });
  return v;
}

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function windowParam(query: ParsedUrlQuery): WindowName {
  const v = single(query, 'window');
  if (v === undefined) return DEFAULT_WINDOW;
  if (!isWindowName(v)) {
    throw problems.invalidQuery('invalid_window', `window must be one of ${WINDOW_NAMES.join(', ')}.`, { parameter: 'window', allowed: WINDOW_NAMES });
  }
  return v;
}

export function detailParam(query: ParsedUrlQuery): boolean {
  const v = single(query, 'detail');
  if (v === undefined || v === '0' || v === 'false') return false;
  if (v === '1' || v === 'true') return true;
  throw problems.invalidQuery('invalid_detail', 'detail must be 1 or true (or 0 or false).', { parameter: 'detail' });
}

export function bucketSecondsParam(query: ParsedUrlQuery, max = MAX_BUCKET_SECONDS, fallback = DEFAULT_BUCKET_SECONDS): number {
  const v = single(query, 'bucketSeconds');
  if (v === undefined) return fallback;
  const n = /^\d{1,6}$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < MIN_BUCKET_SECONDS || n > max) {
    throw problems.invalidQuery('invalid_bucket_seconds', `bucketSeconds must be an integer from ${MIN_BUCKET_SECONDS} to ${max}.`, {
      parameter: 'bucketSeconds',
      minimum: MIN_BUCKET_SECONDS,
      maximum: max,
    });
  }
  return n;
}

export function enumParam<T extends string, F extends T | null>(
  query: ParsedUrlQuery,
  name: string,
  allowed: readonly T[],
  fallback: F,
  aliases: Record<string, T> = {},
): T | F {
  const v = single(query, name);
  if (v === undefined) return fallback;
  if ((allowed as readonly string[]).includes(v)) return v as T;
  // Own properties only: `constructor`, `__proto__` or `toString` must not match Object's.
  if (Object.hasOwn(aliases, v)) return aliases[v]!;
  throw problems.invalidQuery(`invalid_${snake(name)}`, `${name} must be one of ${[...allowed, ...Object.keys(aliases)].join(', ')}.`, {
    parameter: name,
    allowed: [...allowed, ...Object.keys(aliases)],
  });
}

/** A free-text query parameter (given once), if given and not empty. */
export function textParam(query: ParsedUrlQuery, name: string): string | undefined {
  const v = single(query, name);
  return v === '' ? undefined : v;
}

/** The streamId query parameter, if given (its ownership is checked by the caller). */
export function streamIdParam(query: ParsedUrlQuery): string | undefined {
  const v = single(query, 'streamId');
  return v === '' ? undefined : v;
}

export interface PeriodParams {
  from: string;
  to: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function dateParam(query: ParsedUrlQuery, name: string): string | undefined {
  const v = single(query, name);
  if (v === undefined) return undefined;
  const ms = Date.parse(`${v}T00:00:00Z`);
  if (!DATE.test(v) || !Number.isFinite(ms) || new Date(ms).toISOString().slice(0, 10) !== v) {
    throw problems.invalidQuery('invalid_period', `${name} must be a date YYYY-MM-DD.`, { parameter: name });
  }
  return v;
}

/**
 * A billing period `from`–`to` (UTC dates, both included). By default the calendar month of the
 * snapshot's asOf, up to its day; with only `to`, the month of `to` up to it; with only `from`,
 * from it to the asOf's day.
 */
export function periodParams(query: ParsedUrlQuery, asOfMs: number, maxDays = 366): PeriodParams {
  const asOfDay = new Date(asOfMs).toISOString().slice(0, 10);
  const to = dateParam(query, 'to') ?? asOfDay;
  const from = dateParam(query, 'from') ?? `${to.slice(0, 7)}-01`;
  if (from > to) throw problems.invalidQuery('invalid_period', 'from must not be after to.', { parameter: 'from' });
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
  if (days > maxDays) throw problems.invalidQuery('invalid_period', `A period is at most ${maxDays} days (this one is ${days}).`, { parameter: 'to', maximum: maxDays });
  return { from, to };
}
