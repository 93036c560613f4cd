// Inline SVG charts of a pilot report's bucketed series for the HTML page: pure functions that
// return SVG markup with no script and no external reference, the same bytes for the same series.
import type { BucketJson } from '../warehouse/figures/index.ts';
import { formatBytes, formatBytesShort, formatPercent, formatSeconds } from './human-format.ts';
import {
  MARGIN,
  PLOT_BOTTOM,
  PLOT_H,
  esc,
  legend,
  plotMessage,
  px,
  svgFrame,
  timeAxis,
  timeCaption,
  timeDomain,
  valueAxis,
  valueTicks,
  xOf,
  type LegendItem,
  type TimeDomain,
} from './chart-axes.ts';

/** Colours safe for colour-blind readers (Okabe–Ito) and distinct in greyscale print. */
export const CHART_COLORS = { peers: '#0072B2', cdn: '#E69F00', steady: '#333333', windows: '#000000' } as const;

/**
 * Above this many buckets, consecutive buckets share a bar (their bytes added up): bars stay at
 * least ~2.5 px wide and the page stays small for a pilot of weeks at 10-minute buckets.
 */
export const MAX_BARS = 240;

function emptyChart(id: string, title: string): string {
  return svgFrame(id, title, 'The report has no buckets.', plotMessage('No data in this report'));
}

const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);
const dayHhmm = (t: number) => `${new Date(t).toISOString().slice(0, 10)} ${hhmm(t)}`;

/**
 * Offload ratio per bucket as a step line (each bucket's ratio held across its width), with the
 * steady-state ratio as a dashed line over the steady buckets and the cold-start and final windows
 * shaded. Buckets with no bytes have no ratio: the line has a gap there, it does not drop to 0.
 */
export function offloadRatioChart(series: readonly BucketJson[], bucketSeconds: number, steadyStateRatio: number | null): string {
  const id = 'chart-offload';
  const title = 'Offload ratio over time';
  if (series.length === 0) return emptyChart(id, title);
  const d = timeDomain(series.map((b) => b.start), bucketSeconds);
  const windows = series.length >= 3;
  const parts: string[] = windows ? windowShades(series, d) : [];
  parts.push(valueAxis([0, 0.25, 0.5, 0.75, 1], ratioY, (v) => formatPercent(v, 0), 'Offload ratio'));
  const items: LegendItem[] = [{ label: 'Offload ratio per bucket', kind: 'line', color: CHART_COLORS.peers }];
  let desc = `${series.length} bucket${series.length === 1 ? '' : 's'} of ${formatSeconds(bucketSeconds)} from ${dayHhmm(d.t0)} to ${dayHhmm(d.t1)} UTC. `;
  const line = ratioLine(series, d);
  if (line.drawn === 0) {
    parts.push(plotMessage('No bytes delivered in this period'));
    desc += 'No bytes were delivered in any bucket, so there is no offload ratio to show.';
  } else {
    parts.push(`<path class="series" d="${line.path}" fill="none" stroke="${CHART_COLORS.peers}" stroke-width="2" stroke-linejoin="round"/>`);
    desc += `Offload ratio per bucket from ${formatPercent(line.min)} to ${formatPercent(line.max)}`;
    if (steadyStateRatio !== null) desc += steadyLine(series, d, steadyStateRatio, parts, items);
    desc += '.';
  }
  if (windows) items.push({ label: 'Cold-start and final windows', kind: 'shade', color: CHART_COLORS.windows });
  parts.push(timeAxis(d, timeCaption(d, `buckets of ${formatSeconds(bucketSeconds)}`)));
  parts.push(legend(items));
  return svgFrame(id, title, desc, parts.join(''));
}

/** The y of an offload ratio (clamped to 0..1). */
const ratioY = (ratio: number) => MARGIN.top + (1 - Math.min(1, Math.max(0, ratio))) * PLOT_H;

/** The cold-start (first) and final (last) buckets, shaded. */
function windowShades(series: readonly BucketJson[], d: TimeDomain): string[] {
  return [series[0]!, series[series.length - 1]!].map((b) => {
    const x0 = xOf(d, Date.parse(b.start));
    return `<rect class="window" x="${px(x0)}" y="${MARGIN.top}" width="${px(xOf(d, Date.parse(b.start) + d.bucketMs) - x0)}" height="${PLOT_H}" fill="${CHART_COLORS.windows}" fill-opacity="0.07"/>`;
  });
}

/** The step line of the buckets with bytes (a gap at the others), and its range of ratios. */
function ratioLine(series: readonly BucketJson[], d: TimeDomain): { path: string; drawn: number; min: number; max: number } {
  let path = '';
  let lastEnd: number | null = null;
  let drawn = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const b of series) {
    const start = Date.parse(b.start);
    const end = start + d.bucketMs;
    if (b.bytesOffloaded + b.bytesFallback > 0) {
      const y = px(ratioY(b.offloadRatio));
      path += lastEnd === start ? `V${y}H${px(xOf(d, end))}` : `M${px(xOf(d, start))} ${y}H${px(xOf(d, end))}`;
      lastEnd = end;
      drawn++;
      min = Math.min(min, b.offloadRatio);
      max = Math.max(max, b.offloadRatio);
    } else {
      lastEnd = null;
    }
  }
  return { path, drawn, min, max };
}

/** The steady-state ratio as a dashed line with its legend item; returns its words for the description. */
function steadyLine(series: readonly BucketJson[], d: TimeDomain, ratio: number, parts: string[], items: LegendItem[]): string {
  // The steady buckets: between the first and the last, or all of them when fewer than three.
  const windows = series.length >= 3;
  const from = windows ? Date.parse(series[1]!.start) : d.t0;
  const to = windows ? Date.parse(series[series.length - 1]!.start) : d.t1;
  const y = px(ratioY(ratio));
  parts.push(`<line class="steady" x1="${px(xOf(d, from))}" y1="${y}" x2="${px(xOf(d, to))}" y2="${y}" stroke="${CHART_COLORS.steady}" stroke-width="1.5" stroke-dasharray="6 4"/>`);
  items.push({ label: `Steady state ${formatPercent(ratio)}`, kind: 'dash', color: CHART_COLORS.steady });
  return `; steady-state offload ratio ${formatPercent(ratio)}`;
}

interface Bar {
  start: number;
  end: number;
  peers: number;
  cdn: number;
}

/** Consecutive buckets added up, `per` at a time; the last bar may hold fewer. */
function barsOf(series: readonly BucketJson[], d: TimeDomain, per: number): Bar[] {
  const bars: Bar[] = [];
  for (let i = 0; i < series.length; i += per) {
    const group = series.slice(i, i + per);
    const start = Date.parse(group[0]!.start);
    bars.push({
      start,
      end: Math.min(Date.parse(group[group.length - 1]!.start) + d.bucketMs, d.t1),
      peers: group.reduce((a, b) => a + b.bytesOffloaded, 0),
      cdn: group.reduce((a, b) => a + b.bytesFallback, 0),
    });
  }
  return bars;
}

/** Bytes from peers and from the CDN per bucket, stacked (peers at the bottom). */
export function bytesChart(series: readonly BucketJson[], bucketSeconds: number): string {
  const id = 'chart-bytes';
  const title = 'Bytes from peers vs CDN over time';
  if (series.length === 0) return emptyChart(id, title);
  const d = timeDomain(series.map((b) => b.start), bucketSeconds);
  const per = Math.ceil(series.length / MAX_BARS);
  const bars = barsOf(series, d, per);
  const peak = bars.reduce((best, b) => (b.peers + b.cdn > best.peers + best.cdn ? b : best), bars[0]!);
  const { top, ticks } = valueTicks(peak.peers + peak.cdn);
  const yOf = (bytes: number) => PLOT_BOTTOM - (bytes / top) * PLOT_H;
  const hOf = (bytes: number) => (bytes / top) * PLOT_H;

  const parts: string[] = [valueAxis(ticks, yOf, formatBytesShort, 'Bytes delivered')];
  const totalPeers = bars.reduce((a, b) => a + b.peers, 0);
  const totalCdn = bars.reduce((a, b) => a + b.cdn, 0);
  const barWord = per === 1 ? `one per bucket of ${formatSeconds(bucketSeconds)}` : `each adding up ${per} buckets of ${formatSeconds(bucketSeconds)}`;
  let desc = `${bars.length} stacked bar${bars.length === 1 ? '' : 's'}, ${barWord}, from ${dayHhmm(d.t0)} to ${dayHhmm(d.t1)} UTC. `;
  if (totalPeers + totalCdn === 0) {
    parts.push(plotMessage('No bytes delivered in this period'));
    desc += 'No bytes were delivered in any bucket.';
  } else {
    parts.push('<g class="bars">');
    for (const b of bars) {
      const x0 = xOf(d, b.start);
      const w = xOf(d, b.end) - x0;
      const gap = w > 4 ? 1 : 0;
      const x = px(x0 + gap / 2);
      const width = px(w - gap);
      parts.push(`<g><title>${esc(`${dayHhmm(b.start)}–${hhmm(b.end)} UTC: peers ${formatBytes(b.peers)}, CDN ${formatBytes(b.cdn)}`)}</title>`);
      if (b.peers > 0) parts.push(`<rect class="bar-peers" x="${x}" y="${px(yOf(b.peers))}" width="${width}" height="${px(hOf(b.peers))}" fill="${CHART_COLORS.peers}"/>`);
      if (b.cdn > 0) parts.push(`<rect class="bar-cdn" x="${x}" y="${px(yOf(b.peers + b.cdn))}" width="${width}" height="${px(hOf(b.cdn))}" fill="${CHART_COLORS.cdn}"/>`);
      parts.push('</g>');
    }
    parts.push('</g>');
    desc += `From peers ${formatBytes(totalPeers)}, from the CDN ${formatBytes(totalCdn)}; the largest bar, ${formatBytes(peak.peers + peak.cdn)}, starts at ${dayHhmm(peak.start)} UTC.`;
  }
  parts.push(timeAxis(d, timeCaption(d, per === 1 ? `one bar per bucket of ${formatSeconds(bucketSeconds)}` : `one bar per ${per} buckets of ${formatSeconds(bucketSeconds)}`)));
  parts.push(
    legend([
      { label: 'From peers (offloaded)', kind: 'box', color: CHART_COLORS.peers },
      { label: 'From the CDN (fallback)', kind: 'box', color: CHART_COLORS.cdn },
    ]),
  );
  return svgFrame(id, title, desc, parts.join(''));
}
