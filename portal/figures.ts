// What a portal page shows, read from the JSON API (portal/api-client.ts) as the caller: the
// answers' types, and the few reads a page combines (a tenant's series is its streams' series added
// bucket by bucket; the previous period's figures are the API's, `period=previous`).
import pLimit from 'p-limit';
import type { BreakdownFigures } from '../warehouse/reads/index.ts';
import type { BucketJson, BucketQuality } from '../warehouse/figures/index.ts';
import type { PortalApi } from './api-client.ts';
import type { PageState } from './page-state.ts';
import { windowSecondsOf } from './page-state.ts';

/** The figures of a summary, a stream's metrics or a breakdown row (the quality ones absent from a snapshot made before breakdowns). */
export type Figures = Omit<BreakdownFigures, 'rebufferEvents' | 'rebufferRatio' | 'startupTimeP95Ms' | 'p2pConnectionSuccess'> &
  Partial<Pick<BreakdownFigures, 'rebufferEvents' | 'rebufferRatio' | 'startupTimeP95Ms' | 'p2pConnectionSuccess'>>;

/** The previous period's figures and its sessions active at its end. */
export type PreviousFigures = Figures & { activePeers: number };
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
    /** The snapshot the API serves as the page starts: its telemetry answers are kept for it (PortalApi.getAtSnapshot). */
    private readonly snapshotId: string | null = null,
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
   * The previous period's figures (`period=previous`: the period of the window's length that ends
   * where it starts, with the same filters): a customer's, or the platform's; null for `all`.
   */
  async previousSummary(s: PageState, customerId?: string): Promise<PreviousFigures | null> {
    if (windowSecondsOf(s.window) === null) return null;
    const who = customerId ? `&customerId=${enc(customerId)}` : '';
    return this.get(`/telemetry/summary?window=${s.apiWindow}&period=previous${who}${filterQs(s.filters)}`);
  }

  /** The same of one stream (its metrics route), null for `all`. */
  async previousMetrics(streamId: string, s: PageState): Promise<PreviousFigures | null> {
    if (windowSecondsOf(s.window) === null) return null;
    return this.get(`/telemetry/metrics/${enc(streamId)}?window=${s.apiWindow}&period=previous${filterQs(s.filters)}`);
  }

  /**
   * A stream's series over the page's window (the API's, with the page's filters; `quality`: with
   * each bucket's quality figures), cut to the window's whole buckets.
   */
  async series(streamId: string, s: PageState, quality = false): Promise<Series> {
    const q = `${quality ? '&quality=true' : ''}${filterQs(s.filters)}`;
    return wholeBuckets(await this.get<Series>(`/telemetry/timeseries?streamId=${enc(streamId)}&window=${s.apiWindow}&bucketSeconds=${s.bucket}${q}`), s);
  }

  /** The tenant's streams' series added up bucket by bucket (bytes, sessions and events add up across streams). */
  async tenantSeries(streamIds: readonly string[], s: PageState): Promise<Series> {
    // Filtered series are computed on demand: no more at once than the API admits for a tenant.
    const limit = pLimit(s.filters.length > 0 ? ON_DEMAND_AT_ONCE : SERIES_AT_ONCE);
    const parts = await Promise.all(streamIds.map((id) => limit(() => this.series(id, s))));
    return addSeries(parts, s);
  }

  /** A route with ETags (a pilot report), revalidated against the caller's last answer (PortalApi.getRevalidated). */
  revalidated<T>(path: string): Promise<T> {
    return this.api.getRevalidated<T>(path, this.token, this.signal);
  }

  get<T>(path: string): Promise<T> {
    if (this.snapshotId !== null && path.startsWith('/telemetry/')) return this.api.getAtSnapshot<T>(path, this.token, this.snapshotId, this.signal);
    return this.api.get<T>(path, this.token, this.signal);
  }
}

/**
 * The window's whole buckets: the last `window / bucket` of the API's series (whose first bucket
 * holds asOf − window, and so starts before it); `all` as it is.
 */
function wholeBuckets(series: Series, s: PageState): Series {
  const seconds = windowSecondsOf(s.window);
  if (seconds === null) return series;
  const size = s.bucket * 1000;
  const to = Date.parse(series.to);
  const from = Math.floor((to - seconds * 1000 + 1) / size) * size;
  return { ...series, from: new Date(from).toISOString(), buckets: series.buckets.filter((b) => Date.parse(b.start) >= from) };
}

function addSeries(parts: readonly Series[], s: PageState): Series {
  const byStart = new Map<string, Bucket>();
  for (const p of parts) {
    for (const b of p.buckets) {
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
  const first = parts[0];
  return { from: first?.from ?? '', to: first?.to ?? '', bucketSeconds: s.bucket, buckets };
}
