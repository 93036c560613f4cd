// The bucketed series of a window (api-decisions.md, "Timeseries"): whole aligned buckets from
// the one holding asOf − window (for `all`, the stream's first report) to the one holding asOf,
// every bucket present, the empty ones with zeros.
import { problems } from './errors.ts';
import { fillBuckets, toBucketJson, type BucketJson, type BucketRow } from '../warehouse/bucket-series.ts';
import { windowSeconds, type WindowName } from '../warehouse/windows.ts';

export const MAX_BUCKETS = 10_000;

export interface SeriesJson {
  streamId: string;
  window: WindowName;
  bucketSeconds: number;
  from: string;
  to: string;
  buckets: BucketJson[];
}

/** Start of the bucket holding `ms`. */
export function bucketStart(ms: number, bucketSeconds: number): number {
  const size = bucketSeconds * 1000;
  return Math.floor(ms / size) * size;
}

/** The range [from, to] of bucket starts for a window; throws 400 past MAX_BUCKETS. */
export function bucketRange(rows: readonly BucketRow[], asOfMs: number, window: WindowName, bucketSeconds: number): { from: number; to: number } {
  const seconds = windowSeconds(window);
  const to = bucketStart(asOfMs, bucketSeconds);
  const from =
    seconds === null ? Math.min(rows[0]?.startMs ?? to, to) : bucketStart(asOfMs - seconds * 1000, bucketSeconds);
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
): SeriesJson {
  const { from, to } = bucketRange(rows, asOfMs, window, bucketSeconds);
  const buckets = fillBuckets(rows, from, to, bucketSeconds).map(toBucketJson);
  return { streamId, window, bucketSeconds, from: new Date(from).toISOString(), to: new Date(to).toISOString(), buckets };
}
