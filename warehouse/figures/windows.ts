// Time windows and standard bucket sizes of the rollups (docs/api.md).

export const WINDOWS = [
  { name: '1h', seconds: 3_600 },
  { name: '24h', seconds: 86_400 },
  { name: '7d', seconds: 604_800 },
  { name: '30d', seconds: 2_592_000 },
  { name: 'all', seconds: null },
] as const;

export type WindowName = (typeof WINDOWS)[number]['name'];
export const WINDOW_NAMES: readonly WindowName[] = WINDOWS.map((w) => w.name);
export const DEFAULT_WINDOW: WindowName = '24h';

export function isWindowName(v: string): v is WindowName {
  return (WINDOW_NAMES as readonly string[]).includes(v);
}

/**
 * Short trailing windows (alert rules, live views; docs/api.md "Short windows"): exact like the
 * others, but no part of a snapshot. They are computed only when asked, for the streams or
 * customers asked, from the reports of their last 15 minutes (warehouse/reads/short-windows.ts).
 */
export const SHORT_WINDOWS = [
  { name: '5m', seconds: 300 },
  { name: '15m', seconds: 900 },
] as const;

export type ShortWindowName = (typeof SHORT_WINDOWS)[number]['name'];
export const SHORT_WINDOW_NAMES: readonly ShortWindowName[] = SHORT_WINDOWS.map((w) => w.name);

/** A window a route that computes on demand serves: a short one or a snapshot's. */
export type ServedWindow = ShortWindowName | WindowName;
export const SERVED_WINDOW_NAMES: readonly ServedWindow[] = [...SHORT_WINDOW_NAMES, ...WINDOW_NAMES];

export function isShortWindow(v: string): v is ShortWindowName {
  return (SHORT_WINDOW_NAMES as readonly string[]).includes(v);
}

/** Length of any served window in seconds; null for `all`. */
export function servedWindowSeconds(name: ServedWindow): number | null {
  return isShortWindow(name) ? SHORT_WINDOWS.find((w) => w.name === name)!.seconds : windowSeconds(name);
}

/** Length of a window in seconds; null for `all`. */
export function windowSeconds(name: WindowName): number | null {
  return WINDOWS.find((w) => w.name === name)!.seconds;
}

/** Bucket sizes precomputed by every rollup; any other size from 60 to 86400 is computed on demand. */
export const STANDARD_BUCKET_SECONDS = [60, 300, 600, 3_600, 21_600, 86_400] as const;
export const MIN_BUCKET_SECONDS = 60;
export const MAX_BUCKET_SECONDS = 86_400;
export const DEFAULT_BUCKET_SECONDS = 600;
