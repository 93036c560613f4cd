// The whole state of a portal page lives in its URL (window, bucket, filters, the breakdown's
// dimension, the streams table's order, an operator's tenant), so that a link shows a colleague the
// same view and Back restores it. Parsed with a schema here; every link of a page is made from it.
import querystring, { type ParsedUrlQuery } from 'node:querystring';
import { z } from 'zod';
import { parseFilters } from '../served/breakdown-filters.ts';
import { BREAKDOWN_DIMENSIONS } from '../warehouse/reads/index.ts';
import type { SessionDimension } from '../warehouse/reads/index.ts';

/** The windows a page offers: the API's, and the live hour (its last hour, by the minute). */
export const PAGE_WINDOWS = ['live', '1h', '24h', '7d', '30d', 'all'] as const;
export type PageWindow = (typeof PAGE_WINDOWS)[number];
type ApiWindow = Exclude<PageWindow, 'live'>;

/** Bucket sizes a chart may use (the API's precomputed ones), and the one each window starts with. */
export const BUCKETS = [60, 300, 600, 3_600, 21_600, 86_400] as const;
const DEFAULT_BUCKET: Record<PageWindow, number> = { live: 60, '1h': 60, '24h': 600, '7d': 3_600, '30d': 21_600, all: 86_400 };
const WINDOW_SECONDS: Record<PageWindow, number | null> = { live: 3_600, '1h': 3_600, '24h': 86_400, '7d': 604_800, '30d': 2_592_000, all: null };
/** A chart shows at most this many buckets; smaller sizes are not offered for a window. */
const MAX_CHART_BUCKETS = 1_500;

export const SORT_COLUMNS = ['streamId', 'totalSessions', 'totalBytesOffloaded', 'totalBytesFallback', 'avgOffloadRatio', 'activePeers', 'lastSeenAt'] as const;
export type SortColumn = (typeof SORT_COLUMNS)[number];

const one = (v: unknown) => (Array.isArray(v) ? v[0] : v);
const QuerySchema = z.object({
  window: z.preprocess(one, z.enum(PAGE_WINDOWS).catch('24h').default('24h')),
  bucket: z.preprocess((v) => Number(one(v)), z.number().int().optional().catch(undefined)),
  by: z.preprocess(one, z.enum(BREAKDOWN_DIMENSIONS as [SessionDimension, ...SessionDimension[]]).catch('device').default('device')),
  sort: z.preprocess(one, z.enum(SORT_COLUMNS).catch('streamId').default('streamId')),
  dir: z.preprocess(one, z.enum(['asc', 'desc']).catch('asc').default('asc')),
  customer: z.preprocess(one, z.string().regex(/^[a-z0-9_-]{1,64}$/).optional().catch(undefined)),
});

export interface PageState {
  window: PageWindow;
  /** The API's window for this page window. */
  apiWindow: ApiWindow;
  bucket: number;
  /** Bucket sizes that suit the window. */
  buckets: readonly number[];
  /** The filters in canonical form (the API's own parsing: a bad one throws its 400). */
  filters: readonly string[];
  by: SessionDimension;
  sort: SortColumn;
  dir: 'asc' | 'desc';
  /** The tenant an operator looks at (by customer id), if any. */
  customer?: string | undefined;
}

export function bucketsFor(window: PageWindow): number[] {
  const seconds = WINDOW_SECONDS[window];
  return BUCKETS.filter((b) => (seconds === null ? b >= 3_600 : seconds / b <= MAX_CHART_BUCKETS && seconds / b >= 4));
}

/** The page's state from its query string; unknown or bad values fall back to defaults, bad filters are the API's 400. */
export function pageState(query: ParsedUrlQuery): PageState {
  const q = QuerySchema.parse(query);
  const buckets = bucketsFor(q.window);
  const bucket = q.bucket !== undefined && buckets.includes(q.bucket) ? q.bucket : DEFAULT_BUCKET[q.window];
  const { canonical } = parseFilters(query['filter']);
  return { ...q, apiWindow: q.window === 'live' ? '1h' : q.window, bucket, buckets, filters: canonical };
}

/** Query parameters of the state, with `change` applied (undefined removes one). */
export function stateQuery(s: PageState, change: Partial<Record<'window' | 'bucket' | 'by' | 'sort' | 'dir' | 'customer', string | number | undefined>> & { filters?: readonly string[] } = {}): string {
  // Another window starts at its own bucket size unless the change names one.
  const bucket = 'window' in change && !('bucket' in change) ? undefined : s.bucket;
  const merged = { window: s.window, bucket, by: s.by, sort: s.sort, dir: s.dir, customer: s.customer, ...change };
  const params: Record<string, string | string[]> = {};
  if (merged.window !== '24h') params['window'] = String(merged.window);
  if (merged.bucket !== undefined && merged.bucket !== DEFAULT_BUCKET[merged.window as PageWindow]) params['bucket'] = String(merged.bucket);
  if (merged.by !== 'device') params['by'] = String(merged.by);
  if (merged.sort !== 'streamId') params['sort'] = String(merged.sort);
  if (merged.dir !== 'asc') params['dir'] = String(merged.dir);
  if (merged.customer !== undefined) params['customer'] = String(merged.customer);
  const filters = change.filters ?? s.filters;
  if (filters.length > 0) params['filter'] = [...filters];
  const qs = querystring.stringify(params);
  return qs ? `?${qs}` : '';
}

/** The filter that keeps (or drops) one value of a dimension; the empty value stands for null. */
export function filterOf(dimension: string, value: string | null, drop = false): string {
  return `${drop ? '!' : ''}${dimension}:${value ?? ''}`;
}

export const windowSecondsOf = (w: PageWindow): number | null => WINDOW_SECONDS[w];
