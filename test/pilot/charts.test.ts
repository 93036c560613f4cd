// The SVG charts on hand-made series: bars and line levels read back from the markup against the
// series and the charts' own axis labels, one bucket, thousands of buckets, gaps, and no bytes.
import { describe, expect, it } from 'vitest';
import { bytesChart, offloadRatioChart } from '../../pilot/charts.ts';
import type { BucketJson } from '../../warehouse/figures/bucket-series.ts';

const T0 = Date.parse('2026-11-20T06:00:00Z');

function bucket(i: number, bucketSeconds: number, off: number, fb: number): BucketJson {
  return {
    start: new Date(T0 + i * bucketSeconds * 1000).toISOString(),
    sessions: off + fb > 0 ? 3 : 0,
    bytesOffloaded: off,
    bytesFallback: fb,
    offloadRatio: off + fb > 0 ? off / (off + fb) : 0,
    avgPeerCount: 0,
    avgBufferHealth: 0,
    rebufferEvents: 0,
  };
}

const attr = (el: string, name: string) => Number(new RegExp(`\\s${name}="([^"]*)"`).exec(el)![1]);
const rects = (svg: string, cls: string) => [...svg.matchAll(new RegExp(`<rect class="${cls}"[^>]*>`, 'g'))].map((m) => m[0]);
const UNITS: Record<string, number> = { B: 1, kB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 };

/** Bytes per pixel, from the y axis's own labels ("0 B" at the baseline, the top label at its line). */
function bytesPerPixel(svg: string): { bpp: number; baseline: number } {
  const ticks = [...svg.matchAll(/<text class="tick-y"[^>]* y="([\d.]+)"[^>]*>([\d.,]+) (B|kB|MB|GB|TB)<\/text>/g)].map((m) => ({
    y: Number(m[1]),
    bytes: Number(m[2]!.replace(/,/g, '')) * UNITS[m[3]!]!,
  }));
  expect(ticks.length).toBeGreaterThanOrEqual(2);
  const zero = ticks.find((t) => t.bytes === 0)!;
  const top = ticks.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  return { bpp: top.bytes / (zero.y - top.y), baseline: zero.y };
}

/** The horizontal levels of the step line, as ratios read against the 0 % and 100 % labels. */
function lineLevels(svg: string): number[] {
  const y = (label: string) => Number(new RegExp(`<text class="tick-y"[^>]* y="([\\d.]+)"[^>]*>${label}</text>`).exec(svg)![1]);
  const y0 = y('0%');
  const y100 = y('100%');
  const d = /<path class="series" d="([^"]*)"/.exec(svg)![1]!;
  // Each level is the y of an "M x y" or a "V y", and is followed by its "H x".
  return [...d.matchAll(/(?:M[\d.]+ |V)([\d.]+)H/g)].map((m) => (y0 - Number(m[1])) / (y0 - y100));
}

describe('bytes from peers vs CDN', () => {
  it('draws one stacked bar per bucket, heights matching the axis, peers under the CDN', () => {
    const series = [bucket(0, 600, 2e9, 1e9), bucket(1, 600, 3.5e9, 0.5e9), bucket(2, 600, 0, 1.2e9), bucket(3, 600, 0.8e9, 0.2e9)];
    const svg = bytesChart(series, 600);
    const { bpp, baseline } = bytesPerPixel(svg);
    const peers = rects(svg, 'bar-peers');
    const cdn = rects(svg, 'bar-cdn');
    // A zero segment draws nothing: three buckets offloaded something, all four fell back.
    expect(peers.map((r) => attr(r, 'height') * bpp)).toEqual([2e9, 3.5e9, 0.8e9].map((b) => expect.closeTo(b, -7)));
    expect(cdn.map((r) => attr(r, 'height') * bpp)).toEqual([1e9, 0.5e9, 1.2e9, 0.2e9].map((b) => expect.closeTo(b, -7)));
    for (const r of peers) expect(attr(r, 'y') + attr(r, 'height')).toBeCloseTo(baseline, 0);
    // Bars go left to right in time, equally wide.
    const xs = cdn.map((r) => attr(r, 'x'));
    expect([...xs].sort((a, b) => a - b)).toEqual(xs);
    expect(new Set(cdn.map((r) => attr(r, 'width'))).size).toBe(1);
    expect(svg).toMatch(/<title id="chart-bytes-title">Bytes from peers vs CDN over time<\/title>/);
    expect(svg).toContain('role="img"');
  });

  it('with one bucket, draws one bar across the whole plot', () => {
    const svg = bytesChart([bucket(0, 21_600, 4e9, 1e9)], 21_600);
    const [p] = rects(svg, 'bar-peers');
    const [c] = rects(svg, 'bar-cdn');
    expect(attr(p!, 'width')).toBeGreaterThan(600);
    const { bpp } = bytesPerPixel(svg);
    expect(attr(p!, 'height') * bpp).toBeCloseTo(4e9, -7);
    expect(attr(c!, 'height') * bpp).toBeCloseTo(1e9, -7);
  });

  it('with thousands of buckets, adds neighbours up into at most 240 bars and loses no byte', () => {
    const series = Array.from({ length: 4321 }, (_, i) => bucket(i, 60, 1e6 * (1 + (i % 7)), 1e6 * (1 + (i % 3))));
    const svg = bytesChart(series, 60);
    const peers = rects(svg, 'bar-peers');
    expect(peers.length).toBeLessThanOrEqual(240);
    expect(peers.length).toBeGreaterThan(120);
    const { bpp } = bytesPerPixel(svg);
    const drawn = peers.reduce((a, r) => a + attr(r, 'height') * bpp, 0);
    const total = series.reduce((a, b) => a + b.bytesOffloaded, 0);
    // Each height is rounded to 0.1 px: the sum stays within that of the total.
    expect(Math.abs(drawn - total)).toBeLessThan(0.05 * bpp * peers.length);
    // Each bar holds the same number of consecutive buckets (the last one maybe fewer).
    const per = Math.ceil(series.length / peers.length);
    peers.forEach((r, i) => {
      const group = series.slice(i * per, (i + 1) * per).reduce((a, b) => a + b.bytesOffloaded, 0);
      expect(Math.abs(attr(r, 'height') * bpp - group)).toBeLessThan(0.051 * bpp);
    });
    expect(svg.length).toBeLessThan(120_000);
  });

  it('with no bytes at all, says so and draws no bar', () => {
    const svg = bytesChart([bucket(0, 600, 0, 0), bucket(1, 600, 0, 0)], 600);
    expect(rects(svg, 'bar-peers')).toEqual([]);
    expect(rects(svg, 'bar-cdn')).toEqual([]);
    expect(svg).toContain('No bytes delivered in this period');
    expect(svg).not.toMatch(/NaN|Infinity/);
  });
});

describe('offload ratio over time', () => {
  it('holds each bucket\'s ratio across it, read back against the 0 % and 100 % labels', () => {
    const series = [bucket(0, 600, 1, 3), bucket(1, 600, 3, 1), bucket(2, 600, 9, 1), bucket(3, 600, 1, 1)];
    const svg = offloadRatioChart(series, 600, 0.75);
    const levels = lineLevels(svg);
    expect(levels).toEqual([0.25, 0.75, 0.9, 0.5].map((r) => expect.closeTo(r, 3)));
    // The steady-state line spans the steady buckets (1 and 2) at 75 %.
    const steady = /<line class="steady" x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)"/.exec(svg)!;
    const series0 = /<path class="series" d="M([\d.]+) [\d.]+H([\d.]+)/.exec(svg)!;
    const width = Number(series0[2]) - Number(series0[1]);
    expect(Number(steady[3]) - Number(steady[1])).toBeCloseTo(2 * width, 0);
    expect(rects(svg, 'window')).toHaveLength(2);
    expect(svg).toMatch(/<title id="chart-offload-title">Offload ratio over time<\/title>/);
  });

  it('leaves a gap, not a drop to zero, for a bucket without bytes', () => {
    const series = [bucket(0, 600, 1, 1), bucket(1, 600, 0, 0), bucket(2, 600, 3, 1)];
    const svg = offloadRatioChart(series, 600, 0.6);
    const d = /<path class="series" d="([^"]*)"/.exec(svg)![1]!;
    expect(d.match(/M/g)).toHaveLength(2);
    expect(lineLevels(svg)).toEqual([0.5, 0.75].map((r) => expect.closeTo(r, 3)));
  });

  it('with one bucket, draws a line across the plot and no cold-start or final window', () => {
    const svg = offloadRatioChart([bucket(0, 21_600, 2, 1)], 21_600, 2 / 3);
    const m = /<path class="series" d="M([\d.]+) [\d.]+H([\d.]+)"/.exec(svg)!;
    expect(Number(m[2]) - Number(m[1])).toBeGreaterThan(600);
    expect(rects(svg, 'window')).toEqual([]);
    expect(lineLevels(svg)).toEqual([expect.closeTo(2 / 3, 3)]);
  });

  it('with no bytes at all, says so: no line, no steady-state level', () => {
    const svg = offloadRatioChart([bucket(0, 600, 0, 0), bucket(1, 600, 0, 0), bucket(2, 600, 0, 0)], 600, null);
    expect(svg).not.toContain('class="series"');
    expect(svg).not.toContain('class="steady"');
    expect(svg).toContain('No bytes delivered in this period');
  });

  it('with thousands of buckets, stays one path of a reasonable size', () => {
    const series = Array.from({ length: 4321 }, (_, i) => bucket(i, 600, 1 + (i % 5), 2));
    const svg = offloadRatioChart(series, 600, 0.5);
    expect(svg.match(/<path /g)).toHaveLength(1);
    expect(svg.length).toBeLessThan(200_000);
    expect(lineLevels(svg)).toHaveLength(4321);
  });

  it('an empty series gives a frame that says there is no data', () => {
    expect(offloadRatioChart([], 600, null)).toContain('No data in this report');
    expect(bytesChart([], 600)).toContain('No data in this report');
  });
});
