// The series JSON written as bytes straight from columns (api/series-json.ts) is byte for byte
// what JSON.stringify gives for the same window built the plain way (fillBuckets, toBucketJson):
// gaps, buckets before the window, fractional and huge figures, non-ASCII and escaped stream ids,
// an empty stream.
import { describe, expect, it } from 'vitest';
import { windowSeries } from '../../api/timeseries.ts';
import { seriesJsonBody } from '../../api/series-json.ts';
import type { BucketRow } from '../../warehouse/figures/bucket-series.ts';
import type { SeriesColumns } from '../../warehouse/reads/series-read.ts';

const STEP = 600_000;

/** The body as text (UTF-8), to compare with JSON.stringify. */
const seriesJsonText = (...args: Parameters<typeof seriesJsonBody>): string => seriesJsonBody(...args).toString('utf8');
const T0 = Date.parse('2026-11-20T00:00:00Z');

function columnsOf(streamId: string, rows: BucketRow[]): SeriesColumns {
  return {
    streamId: rows.map(() => streamId),
    startMs: rows.map((r) => r.startMs),
    sessions: rows.map((r) => r.sessions),
    bytesOffloaded: rows.map((r) => r.bytesOffloaded),
    bytesFallback: rows.map((r) => r.bytesFallback),
    offloadRatio: rows.map((r) => r.offloadRatio),
    avgPeerCount: rows.map((r) => r.avgPeerCount),
    avgBufferHealth: rows.map((r) => r.avgBufferHealth),
    rebufferEvents: rows.map((r) => r.rebufferEvents),
  };
}

const row = (k: number, f: number): BucketRow => ({
  startMs: T0 + k * STEP,
  sessions: 3 + k,
  bytesOffloaded: 123_456_789_012 * (k + 1),
  bytesFallback: 0,
  offloadRatio: 1 / (k + 3),
  avgPeerCount: f,
  avgBufferHealth: 0.1 + 0.2,
  rebufferEvents: k,
});

describe('series JSON text', () => {
  it('equals JSON.stringify of the plain series, with gaps and buckets outside the window', () => {
    const rows = [row(-30, 2.5), row(1, 1e-7), row(2, 3), row(7, 12345.678901234567), row(143, 0)];
    const asOf = T0 + 143 * STEP + 59_000;
    const plain = windowSeries('acme:live "x"', rows, asOf, '24h', 600);
    const from = Date.parse(plain.from);
    const to = Date.parse(plain.to);
    expect(plain.buckets.length).toBe(145);
    expect(seriesJsonText('acme:live "x"', '24h', 600, from, to, columnsOf('acme:live "x"', rows))).toBe(JSON.stringify(plain));
  });

  it('equals it at every standard size over days, a leap day and a year end (the start times are formatted per day)', () => {
    for (const [startIso, bucketSeconds, window] of [
      ['2028-02-27T22:00:00Z', 60, '24h'],
      ['2028-02-27T00:00:00Z', 300, '7d'],
      ['2026-12-30T12:00:00Z', 600, '7d'],
      ['2026-12-01T00:00:00Z', 3600, '30d'],
      ['2026-11-01T00:00:00Z', 21_600, '30d'],
      ['2026-10-01T00:00:00Z', 86_400, '30d'],
    ] as const) {
      const t0 = Date.parse(startIso);
      const step = bucketSeconds * 1000;
      const rows: BucketRow[] = [0, 1, 5, 40, 200, 1200].map((k) => ({ ...row(k, 1.5), startMs: t0 + k * step }));
      const asOf = t0 + 1300 * step + 1234;
      const plain = windowSeries('acme:live', rows, asOf, window, bucketSeconds);
      const text = seriesJsonText('acme:live', window, bucketSeconds, Date.parse(plain.from), Date.parse(plain.to), columnsOf('acme:live', rows));
      expect(text, `${startIso} ${bucketSeconds}`).toBe(JSON.stringify(plain));
    }
  });

  it('equals it for figures of every form a double takes, and a stream id that is not ASCII', () => {
    const figures = [0, -0, 1, 9, 10, 99, 100, 2 ** 53 - 1, 2 ** 53, 1e21, 123.5, 1e-7, 5e-324, 0.1 + 0.2, 1 / 3, 1.7976931348623157e308, 4294967296.5, -1, -0.0000012345678901234567, Number.NaN, Infinity];
    const rows: BucketRow[] = figures.map((f, k) => ({
      startMs: T0 + k * STEP,
      sessions: f,
      bytesOffloaded: f,
      bytesFallback: figures[(k + 1) % figures.length]!,
      offloadRatio: f,
      avgPeerCount: figures[(k + 5) % figures.length]!,
      avgBufferHealth: f,
      rebufferEvents: figures[(k + 3) % figures.length]!,
    }));
    const id = 'acme:é-\u0001-\\-"live"-流';
    const plain = windowSeries(id, rows, T0 + (figures.length + 2) * STEP, '24h', 600);
    expect(seriesJsonText(id, '24h', 600, Date.parse(plain.from), Date.parse(plain.to), columnsOf(id, rows))).toBe(JSON.stringify(plain));
  });

  it('fits 10 000 buckets whose every figure has the longest text a number can have', () => {
    const longest = -0.0000012345678901234567;
    expect(String(longest)).toHaveLength(25);
    const step = 60_000;
    const rows: BucketRow[] = Array.from({ length: 10_000 }, (_, k) => ({
      startMs: T0 + k * step,
      sessions: longest,
      bytesOffloaded: longest,
      bytesFallback: longest,
      offloadRatio: longest,
      avgPeerCount: longest,
      avgBufferHealth: longest,
      rebufferEvents: longest,
    }));
    const plain = windowSeries('acme:live', rows, T0 + 9_999 * step, 'all', 60);
    expect(plain.buckets).toHaveLength(10_000);
    expect(seriesJsonText('acme:live', 'all', 60, Date.parse(plain.from), Date.parse(plain.to), columnsOf('acme:live', rows))).toBe(JSON.stringify(plain));
  });

  it('equals it for a stream without any bucket', () => {
    const plain = windowSeries('acme:quiet', [], T0, '1h', 600);
    expect(seriesJsonText('acme:quiet', '1h', 600, Date.parse(plain.from), Date.parse(plain.to), columnsOf('acme:quiet', []))).toBe(JSON.stringify(plain));
  });
});
