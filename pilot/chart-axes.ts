// The frame every pilot-report chart shares: plot geometry, a UTC time axis over the report's
// buckets, a value axis with round ticks, a legend, and the escaping of anything put in SVG text.
export const WIDTH = 720;
export const HEIGHT = 280;
export const MARGIN = { left: 72, right: 16, top: 40, bottom: 50 } as const;
export const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
export const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
export const PLOT_BOTTOM = MARGIN.top + PLOT_H;

export const INK = { axis: '#333333', grid: '#d9d9d9', muted: '#555555' } as const;

/** Text and attribute values in SVG: data (stream ids, versions, reasons) never becomes markup. */
export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A coordinate to a tenth of a pixel: finer is invisible, and it keeps big series small. */
export function px(v: number): string {
  const r = Math.round(v * 10) / 10;
  return (r === 0 ? 0 : r).toString();
}

export interface TimeDomain {
  t0: number;
  t1: number;
  bucketMs: number;
}

/** From the first bucket's start to the end of the last bucket. */
export function timeDomain(starts: readonly string[], bucketSeconds: number): TimeDomain {
  const bucketMs = bucketSeconds * 1000;
  const t0 = Date.parse(starts[0]!);
  const t1 = Date.parse(starts[starts.length - 1]!) + bucketMs;
  return { t0, t1, bucketMs };
}

export function xOf(d: TimeDomain, t: number): number {
  return MARGIN.left + ((t - d.t0) / (d.t1 - d.t0)) * PLOT_W;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const TICK_STEPS = [1, 2, 5, 10, 15, 30].map((m) => m * MINUTE).concat([1, 2, 3, 6, 12].map((h) => h * HOUR), [1, 2, 7, 14].map((d) => d * DAY));
const MAX_TIME_TICKS = 6;

/** Ticks at round UTC times (multiples of a step since the epoch), at most six. */
export function timeTicks(d: TimeDomain): { t: number; label: string }[] {
  const span = d.t1 - d.t0;
  const step = TICK_STEPS.find((s) => span / s <= MAX_TIME_TICKS) ?? Math.ceil(span / MAX_TIME_TICKS / DAY) * DAY;
  const multiDay = new Date(d.t0).toISOString().slice(0, 10) !== new Date(d.t1 - 1).toISOString().slice(0, 10);
  const ticks: { t: number; label: string }[] = [];
  for (let t = Math.ceil(d.t0 / step) * step; t <= d.t1; t += step) {
    const iso = new Date(t).toISOString();
    const label = step >= DAY ? iso.slice(5, 10) : multiDay ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
    ticks.push({ t, label });
  }
  return ticks;
}

/** The x axis: baseline, ticks, labels, and a caption saying what the time range and buckets are. */
export function timeAxis(d: TimeDomain, caption: string): string {
  const parts = [`<line x1="${MARGIN.left}" y1="${PLOT_BOTTOM}" x2="${MARGIN.left + PLOT_W}" y2="${PLOT_BOTTOM}" stroke="${INK.axis}"/>`];
  for (const tick of timeTicks(d)) {
    const x = px(xOf(d, tick.t));
    parts.push(
      `<line x1="${x}" y1="${PLOT_BOTTOM}" x2="${x}" y2="${PLOT_BOTTOM + 5}" stroke="${INK.axis}"/>`,
      `<text class="tick-x" x="${x}" y="${PLOT_BOTTOM + 17}" text-anchor="middle" fill="${INK.axis}">${esc(tick.label)}</text>`,
    );
  }
  parts.push(`<text x="${MARGIN.left + PLOT_W / 2}" y="${HEIGHT - 8}" text-anchor="middle" fill="${INK.muted}">${esc(caption)}</text>`);
  return parts.join('');
}

/** "Time (UTC), 2026-11-20 00:00 to 06:00; buckets of 10 min" */
export function timeCaption(d: TimeDomain, buckets: string): string {
  const from = new Date(d.t0).toISOString();
  const to = new Date(d.t1).toISOString();
  const sameDay = from.slice(0, 10) === to.slice(0, 10);
  const range = `${from.slice(0, 10)} ${from.slice(11, 16)} to ${sameDay ? '' : `${to.slice(0, 10)} `}${to.slice(11, 16)}`;
  return `Time (UTC), ${range}; ${buckets}`;
}

/** Round value ticks from 0 to at least `max` (steps of 1, 2, 2.5 or 5 × 10^k), four or five of them. */
export function valueTicks(max: number): { top: number; ticks: number[] } {
  if (!(max > 0)) return { top: 1, ticks: [0] };
  const raw = max / 4;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const top = Math.ceil(max / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let i = 0; i * step <= top + step / 1e6; i++) ticks.push(i * step);
  return { top, ticks };
}

/** The y axis with grid lines: `ticks` are values, `yOf` places them, `label` prints them. */
export function valueAxis(ticks: readonly number[], yOf: (v: number) => number, label: (v: number) => string, title: string): string {
  const parts: string[] = [];
  for (const v of ticks) {
    const y = px(yOf(v));
    parts.push(
      `<line x1="${MARGIN.left}" y1="${y}" x2="${MARGIN.left + PLOT_W}" y2="${y}" stroke="${INK.grid}" stroke-width="0.8"/>`,
      `<text class="tick-y" x="${MARGIN.left - 6}" y="${y}" dy="0.32em" text-anchor="end" fill="${INK.axis}">${esc(label(v))}</text>`,
    );
  }
  parts.push(
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${PLOT_BOTTOM}" stroke="${INK.axis}"/>`,
    `<text transform="translate(14 ${MARGIN.top + PLOT_H / 2}) rotate(-90)" text-anchor="middle" fill="${INK.muted}">${esc(title)}</text>`,
  );
  return parts.join('');
}

export interface LegendItem {
  label: string;
  /** A filled square, a line, or a dashed line. */
  kind: 'box' | 'line' | 'dash' | 'shade';
  color: string;
}

/** One row of legend items above the plot, left to right. */
export function legend(items: readonly LegendItem[]): string {
  const parts: string[] = ['<g class="legend">'];
  let x = MARGIN.left;
  const y = 16;
  for (const it of items) {
    if (it.kind === 'box') parts.push(`<rect x="${x}" y="${y - 9}" width="12" height="12" fill="${it.color}"/>`);
    else if (it.kind === 'shade') parts.push(`<rect x="${x}" y="${y - 9}" width="12" height="12" fill="${it.color}" fill-opacity="0.12" stroke="${it.color}" stroke-opacity="0.4"/>`);
    else parts.push(`<line x1="${x}" y1="${y - 3}" x2="${x + 16}" y2="${y - 3}" stroke="${it.color}" stroke-width="2"${it.kind === 'dash' ? ' stroke-dasharray="4 3"' : ''}/>`);
    parts.push(`<text x="${x + 20}" y="${y}" fill="${INK.axis}">${esc(it.label)}</text>`);
    // Text width is not measurable here: an average glyph width of 6.2 px at 11 px is close enough.
    x += 20 + Math.ceil(it.label.length * 6.2) + 18;
  }
  parts.push('</g>');
  return parts.join('');
}

/** A message across the middle of the plot, for a chart with nothing to draw. */
export function plotMessage(text: string): string {
  return `<text class="empty" x="${MARGIN.left + PLOT_W / 2}" y="${MARGIN.top + PLOT_H / 2}" text-anchor="middle" fill="${INK.muted}" font-size="13">${esc(text)}</text>`;
}

/** The <svg> element around a chart: an image role named by its title and described by its desc. */
export function svgFrame(id: string, title: string, desc: string, body: string): string {
  return (
    `<svg class="chart" id="${esc(id)}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" ` +
    `aria-labelledby="${esc(id)}-title" aria-describedby="${esc(id)}-desc" ` +
    `font-family="system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif" font-size="11">` +
    `<title id="${esc(id)}-title">${esc(title)}</title><desc id="${esc(id)}-desc">${esc(desc)}</desc>${body}</svg>`
  );
}
