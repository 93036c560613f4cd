// What a portal page shows, read from the JSON API (portal/api-client.ts) as the caller: the
// answers' types, and the few reads a page combines (a tenant's series is its streams' series added
// bucket by bucket; the previous period is the same number of whole buckets before the window).
import pLimit from 'p-limit';
import type { BreakdownFigures } from '../warehouse/breakdowns.ts';
import type { BucketJson, BucketQuality } from '../warehouse/bucket-series.ts';
import type { PortalApi } from './api-client.ts';
import type { PageState } from './page-state.ts';
import { windowSecondsOf } from './page-state.ts';

/** The figures of a summary, a stream's metrics or a breakdown row (the quality ones absent from a snapshot made before breakdowns). */
export type Figures = Omit<BreakdownFigures, 'rebufferEvents' | 'rebufferRatio' | 'startupTimeP95Ms' | 'p2pConnectionSuccess'> &
  Partial<Pick<BreakdownFigures, 'rebufferEvents' | 'rebufferRatio' | 'startupTimeP95Ms' | 'p2pConnectionSuccess'>>;
export interface Summary extends Figures {
  asOf: string;
  streams: number;
  activePeers: number;
}
export interface StreamSummary extends Figures {
  streamId: string;
  activePeers: number;
  live: boolean;
  lastSeenAt: string | null;
}
/** A bucket of the API's series; with its quality figures when the page asked for them. */
export type Bucket = BucketJson & Partial<BucketQuality>;
export interface Series {
  from: string;
  to: string;
  bucketSeconds: number;
  buckets: Bucket[];
}
export interface BreakdownRow extends Figures {
  value: string | null;
}

/** The previous period's additive figures, from whole buckets (null where the series cannot say). */
export interface PeriodTotals {
  bytesOffloaded: number;
  bytesFallback: number;
  rebufferEvents: number;
}

const enc = encodeURIComponent;
const filterQs = (filters: readonly string[]) => filters.map((f) => `&filter=${enc(f)}`).join('');

/** Series reads of a tenant's streams run this many at once. */
const SERIES_AT_ONCE = 4;
/** Filtered series reads (on demand) run this many at once: under API_ONDEMAND_PER_TENANT's default, 2. */
const ON_DEMAND_AT_ONCE = 1;

export class PageReads {
  constructor(
    private readonly api: PortalApi,
    private readonly token: string,
    private readonly signal?: AbortSignal,
  ) {}

  summary(s: PageState, customerId?: string): Promise<Summary> {
    const who = customerId ? `&customerId=${enc(customerId)}` : '';
    return this.get(`/telemetry/summary?window=${s.apiWindow}${who}${filterQs(s.filters)}`);
  }

  /** The streams with a report in the window; with filters, those with a kept session, with those sessions' figures. */
  async streams(window: string, filters: readonly string[] = []): Promise<StreamSummary[]> {
    return (await this.get<{ streams: StreamSummary[] }>(`/telemetry/streams?detail=1&window=${window}${filterQs(filters)}`)).streams;
  }

  metrics(streamId: string, s: PageState): Promise<Figures & { asOf: string }> {
    return this.get(`/telemetry/metrics/${enc(streamId)}?window=${s.apiWindow}${filterQs(s.filters)}`);
  }

  async breakdown(streamId: string | null, by: string, s: PageState): Promise<BreakdownRow[]> {
    const stream = streamId ? `&streamId=${enc(streamId)}` : '';
    return (await this.get<{ rows: BreakdownRow[] }>(`/telemetry/breakdown?by=${by}&window=${s.apiWindow}${stream}${filterQs(s.filters)}`)).rows;
  }

  /**
   * A stream's series over the page's window and the one before it: the API's series of the next
   * longer window (one request), split into the page window's whole buckets and as many before;
   * `quality`: with each bucket's quality figures (the route's `quality=true`).
   */
  async seriesWithPrevious(streamId: string, s: PageState, quality = false): Promise<{ current: Series; previous: PeriodTotals | null }> {
    const q = quality ? '&quality=true' : '';
    if (s.filters.length > 0) {
      // A filtered series keeps sessions by their earliest report in its own range: the page's
      // window is asked for as it is (no longer window to split; its whole buckets shown, as
      // without filters), and no previous period.
      const series = await this.get<Series>(`/telemetry/timeseries?streamId=${enc(streamId)}&window=${s.apiWindow}&bucketSeconds=${s.bucket}${q}${filterQs(s.filters)}`);
      return { current: splitPeriods(series, s).current, previous: null };
    }
    const longer = LONGER_WINDOW[s.window];
    const series = await this.get<Series>(`/telemetry/timeseries?streamId=${enc(streamId)}&window=${longer ?? 'all'}&bucketSeconds=${s.bucket}${q}`);
    return splitPeriods(series, s);
  }

  /** The tenant's streams' series added up bucket by bucket (bytes, sessions and events add up across streams). */
  async tenantSeries(streamIds: readonly string[], s: PageState): Promise<{ current: Series; previous: PeriodTotals | null }> {
    // Filtered series are computed on demand: no more at once than the API admits for a tenant.
    const limit = pLimit(s.filters.length > 0 ? ON_DEMAND_AT_ONCE : SERIES_AT_ONCE);
    const parts = await Promise.all(streamIds.map((id) => limit(() => this.seriesWithPrevious(id, s))));
    return addSeries(parts, s);
  }

  get<T>(path: string): Promise<T> {
    return this.api.get<T>(path, this.token, this.signal);
  }
}

/** The API window a period and the one before it fit in. */
const LONGER_WINDOW: Record<PageState['window'], string | null> = { live: '24h', '1h': '24h', '24h': '7d', '7d': '30d', '30d': 'all', all: null };

function splitPeriods(series: Series, s: PageState): { current: Series; previous: PeriodTotals | null } {
  const seconds = windowSecondsOf(s.window);
  if (seconds === null) return { current: series, previous: null };
  const size = s.bucket * 1000;
  const to = Date.parse(series.to);
  const from = Math.floor((to - seconds * 1000 + 1) / size) * size;
  const n = (to - from) / size + 1;
  const current = series.buckets.filter((b) => Date.parse(b.start) >= from);
  const before = series.buckets.filter((b) => Date.parse(b.start) < from).slice(-n);
  const previous = before.length < n ? null : totals(before);
  return { current: { ...series, from: new Date(from).toISOString(), buckets: current }, previous };
}

/** The additive figures of some buckets, added up. */
export function totals(buckets: readonly Bucket[]): PeriodTotals {
  return buckets.reduce((a, b) => ({ bytesOffloaded: a.bytesOffloaded + b.bytesOffloaded, bytesFallback: a.bytesFallback + b.bytesFallback, rebufferEvents: a.rebufferEvents + b.rebufferEvents }), {
    bytesOffloaded: 0,
    bytesFallback: 0,
    rebufferEvents: 0,
  });
}

function addSeries(parts: { current: Series; previous: PeriodTotals | null }[], s: PageState): { current: Series; previous: PeriodTotals | null } {
  const byStart = new Map<string, Bucket>();
  for (const p of parts) {
    for (const b of p.current.buckets) {
      const a = byStart.get(b.start);
      if (!a) byStart.set(b.start, { ...b });
      else {
        a.sessions += b.sessions;
        a.bytesOffloaded += b.bytesOffloaded;
        a.bytesFallback += b.bytesFallback;
        a.rebufferEvents += b.rebufferEvents;
      }
    }
  }
  const buckets = [...byStart.values()].sort((x, y) => x.start.localeCompare(y.start));
  for (const b of buckets) b.offloadRatio = b.bytesOffloaded + b.bytesFallback === 0 ? 0 : b.bytesOffloaded / (b.bytesOffloaded + b.bytesFallback);
  const previous = parts.length > 0 && parts.every((p) => p.previous !== null) ? parts.reduce((a, p) => addTotals(a, p.previous!), totals([])) : null;
  const first = parts[0]?.current;
  return { current: { from: first?.from ?? '', to: first?.to ?? '', bucketSeconds: s.bucket, buckets }, previous };
}

const addTotals = (a: PeriodTotals, b: PeriodTotals): PeriodTotals => ({
  bytesOffloaded: a.bytesOffloaded + b.bytesOffloaded,
  bytesFallback: a.bytesFallback + b.bytesFallback,
  rebufferEvents: a.rebufferEvents + b.rebufferEvents,
});
