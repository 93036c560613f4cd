// The bucketed series of a window (docs/api.md, "Timeseries"): whole aligned buckets from
// the one holding asOf − window (for `all`, the stream's first report) to the one holding asOf,
// every bucket present, the empty ones with zeros. Standard sizes are read on demand from the
// snapshot's series files (only the window's row groups), so memory follows the requests, not
// the history; the serialised answers are cached by the route.
import { LRUCache } from 'lru-cache';
import { problems } from '../served/problems.ts';
import { emptyBucket, fillBuckets, NO_QUALITY, toBucketJson, type BucketJson, type BucketRow, type QualityBucketJson, type QualityBucketRow } from '../warehouse/figures/index.ts';
import { firstMinutes, readSeries, readSeriesColumns, seriesFilesIn } from '../warehouse/reads/index.ts';
import { seriesJsonBody } from './series-json.ts';
import { windowSeconds, type WindowName } from '../warehouse/figures/index.ts';
import { parseStreamId } from '../warehouse/ids.ts';
import type { Db } from '../warehouse/duckdb/index.ts';
import type { DbSession } from '../warehouse/duckdb/index.ts';
import type { ServedSnapshot } from '../served/snapshot-store.ts';

export const MAX_BUCKETS = 10_000;

export interface SeriesJson {
  streamId: string;
  window: WindowName;
  bucketSeconds: number;
  from: string;
  to: string;
  buckets: BucketJson[] | QualityBucketJson[];
  /** With filters only: the filters applied (canonical form). */
  filters?: readonly string[];
}

/** Start of the bucket holding `ms`. */
export function bucketStart(ms: number, bucketSeconds: number): number {
  const size = bucketSeconds * 1000;
  return Math.floor(ms / size) * size;
}

/**
 * The range [from, to] of bucket starts for a window; `firstMs` is the stream's first report, or
 * the start of its first minute or of any bucket holding it (used by `all`; null when it has
 * none). Throws 400 past MAX_BUCKETS.
 */
export function bucketRange(firstMs: number | null, asOfMs: number, window: WindowName, bucketSeconds: number): { from: number; to: number } {
  const seconds = windowSeconds(window);
  const to = bucketStart(asOfMs, bucketSeconds);
  const from = seconds === null ? Math.min(firstMs === null ? to : bucketStart(firstMs, bucketSeconds), to) : bucketStart(asOfMs - seconds * 1000, bucketSeconds);
  const count = (to - from) / (bucketSeconds * 1000) + 1;
  if (count > MAX_BUCKETS) {
    throw problems.invalidQuery(
      'too_many_buckets',
      `This window at ${bucketSeconds} s per bucket is ${count} buckets; at most ${MAX_BUCKETS}. Use a larger bucketSeconds or a shorter window.`,
      { buckets: count, maximum: MAX_BUCKETS },
    );
  }
  return { from, to };
}

/** The series of a window from a stream's non-empty buckets (sorted by start). */
export function windowSeries(
  streamId: string,
  rows: readonly BucketRow[],
  asOfMs: number,
  window: WindowName,
  bucketSeconds: number,
  /** Where `all` starts when the rows may not say (a filtered series): the stream's first minute. */
  firstMs: number | null = null,
): SeriesJson {
  const { from, to } = bucketRange(firstMs ?? rows[0]?.startMs ?? null, asOfMs, window, bucketSeconds);
  const buckets = fillBuckets(rows, from, to, bucketSeconds).map(toBucketJson);
  return { streamId, window, bucketSeconds, from: new Date(from).toISOString(), to: new Date(to).toISOString(), buckets };
}

/** The same with each bucket's quality figures (empty buckets: zero times, null percentile and success). */
export function windowQualitySeries(
  streamId: string,
  rows: readonly QualityBucketRow[],
  { asOfMs, window, bucketSeconds, firstMs }: { asOfMs: number; window: WindowName; bucketSeconds: number; firstMs: number | null },
): SeriesJson {
  const { from, to } = bucketRange(firstMs ?? rows[0]?.startMs ?? null, asOfMs, window, bucketSeconds);
  const buckets = fillBuckets(rows, from, to, bucketSeconds, (startMs) => ({ ...emptyBucket(startMs), ...NO_QUALITY })).map(toBucketJson);
  return { streamId, window, bucketSeconds, from: new Date(from).toISOString(), to: new Date(to).toISOString(), buckets };
}

/** Rough heap bytes of a row kept in the cache (an object of eight numbers). */
const ROW_BYTES = 120;

/**
 * Reads of a snapshot's precomputed series: a stream's window of one standard size, its first
 * minute (where `all` starts), a customer's daily series (billing). Rows that several answers
 * share are kept in a cache bounded in bytes.
 */
export class SnapshotSeries {
  private readonly rows: LRUCache<string, BucketRow[] | Map<string, BucketRow[]>>;
  private readonly pending = new Map<string, Promise<Map<string, BucketRow[]>>>();

  constructor(
    private readonly db: Db,
    cacheBytes: number,
  ) {
    this.rows = new LRUCache({
      maxSize: Math.max(1, cacheBytes),
      sizeCalculation: (v) => 64 + ROW_BYTES * (Array.isArray(v) ? v.length : [...v.values()].reduce((n, l) => n + l.length + 1, 0)),
    });
  }

  /** The JSON body of a window's series at a standard size, read from the snapshot's files. */
  async windowJson(snap: ServedSnapshot, streamId: string, window: WindowName, bucketSeconds: number): Promise<Buffer> {
    const customerId = parseStreamId(streamId)?.customerId;
    const files = customerId && snap.hasCustomer(customerId) ? await snap.seriesFiles(customerId) : [];
    const first = windowSeconds(window) === null ? await this.firstMinute(snap, streamId) : null;
    return this.db.withSession(async (s) => {
      // Refused (400) before reading anything when the window is too many buckets.
      const { from, to } = bucketRange(first, snap.asOfMs, window, bucketSeconds);
      // Only the files of the days the window meets are opened.
      const cols = await readSeriesColumns(s, { files: seriesFilesIn(files, from, to), streamId, bucketSeconds, fromMs: from, toMs: to });
      return seriesJsonBody(streamId, window, bucketSeconds, from, to, cols);
    });
  }

  /**
   * Start of the stream's first minute bucket (its first report's minute), or null: where its
   * `all` window starts at every size. Looked up for all the customer's streams at once, once per
   * snapshot (a dashboard asks for several streams and sizes).
   */
  async firstMinute(snap: ServedSnapshot, streamId: string): Promise<number | null> {
    const customerId = parseStreamId(streamId)?.customerId;
    if (!customerId || !snap.hasCustomer(customerId)) return null;
    const firsts = await snap.firstMinutes(customerId, async () => {
      const files = seriesFilesIn(await snap.seriesFiles(customerId), null, null);
      return this.db.withSession((s: DbSession) => firstMinutes(s, files, snap.streamsOf(customerId)));
    });
    return firsts.get(streamId) ?? null;
  }

  /** Each of a customer's streams with its daily buckets (all history), by stream id. */
  async daily(snap: ServedSnapshot, customerId: string): Promise<ReadonlyMap<string, readonly BucketRow[]>> {
    if (!snap.hasCustomer(customerId)) return new Map();
    const key = `${snap.id}|daily|${customerId}`;
    const hit = this.rows.get(key);
    if (hit instanceof Map) return hit;
    let p = this.pending.get(key);
    if (!p) {
      p = snap
        .seriesFiles(customerId)
        .then((files) =>
          this.db.withSession((s) => readSeries(s, { files: seriesFilesIn(files, null, null), bucketSeconds: 86_400, streamId: null, fromMs: null, toMs: null })),
        )
        .then((rows) => {
          this.rows.set(key, rows);
          return rows;
        });
      this.pending.set(key, p);
      const done = () => this.pending.delete(key);
      p.then(done, done);
    }
    return p;
  }
}
