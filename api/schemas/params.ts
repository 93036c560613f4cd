// The query parameters the routes share, as zod fields: one definition for parsing (api/query.ts)
// and for the OpenAPI document (their JSON Schema, description and default).
import { z } from 'zod';
import { isoDate } from '../../lib/json-schema.ts';
import { DEFAULT_BUCKET_SECONDS, DEFAULT_WINDOW, MAX_BUCKET_SECONDS, MIN_BUCKET_SECONDS, SERVED_WINDOW_NAMES, WINDOW_NAMES, type ServedWindow, type WindowName } from '../../warehouse/figures/index.ts';

export const windowParam = z
  .enum(WINDOW_NAMES as [WindowName, ...WindowName[]])
  .default(DEFAULT_WINDOW)
  .describe('A window counts the reports with asOf − window < ts ≤ asOf (asOf: the snapshot time).');

/**
 * The window of the routes that compute on demand (stream metrics, breakdown): the snapshot's
 * windows and the short ones (5m, 15m), computed from the recent reports when asked. The other
 * routes serve a snapshot's rows only and refuse 5m and 15m (400 invalid_window, docs/api.md).
 */
export const servedWindowParam = z
  .enum(SERVED_WINDOW_NAMES as [ServedWindow, ...ServedWindow[]])
  .default(DEFAULT_WINDOW)
  .describe('A window counts the reports with asOf − window < ts ≤ asOf (asOf: the snapshot time). 5m and 15m are computed on demand from the recent reports.');

export const detailParam = z
  .enum(['1', 'true', '0', 'false'])
  .default('0')
  .transform((v) => v === '1' || v === 'true')
  .describe('1 or true for stream summaries');

/**
 * Seconds per bucket: digits only (no sign, exponent or fraction), then the range. A query string
 * is text, so the digits are turned into a number before the integer check.
 */
export function optionalBucketSecondsParam(max = MAX_BUCKET_SECONDS) {
  return z.preprocess((v) => (typeof v === 'string' && /^\d{1,6}$/.test(v) ? Number(v) : v), z.int().min(MIN_BUCKET_SECONDS).max(max).optional());
}

export function bucketSecondsParam(max = MAX_BUCKET_SECONDS, fallback = DEFAULT_BUCKET_SECONDS) {
  return z.preprocess((v) => (typeof v === 'string' && /^\d{1,6}$/.test(v) ? Number(v) : v), z.int().min(MIN_BUCKET_SECONDS).max(max).default(fallback));
}

/** A free-text parameter; the empty string counts as absent. */
export const optionalText = () =>
  z
    .string()
    .optional()
    .transform((v) => (v === '' ? undefined : v));

/** One of `values`, or one of their other names (looked up as own properties only). */
export function enumParam<const T extends readonly [string, ...string[]]>(values: T, fallback: T[number], aliases: Readonly<Record<string, T[number]>> = {}) {
  return z
    .enum([...values, ...Object.keys(aliases)] as unknown as [T[number], ...T[number][]])
    .default(fallback)
    .transform((v): T[number] => (Object.hasOwn(aliases, v) ? aliases[v]! : v));
}

export const dateParam = (description: string) => isoDate().optional().describe(description);
