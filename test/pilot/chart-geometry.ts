// Reading a chart back from what Chromium laid out: bar segments, the line's extent and the value
// axis's labels (getBBox works in the chart's own units, whatever size CSS gives the SVG).
import type { Page } from 'playwright-core';

// The few DOM shapes the page-side functions below use: the project compiles without the DOM library.
interface DomBox {
  x: number;
  y: number;
  width: number;
  height: number;
}
export interface DomElement {
  textContent: string | null;
  href: string;
  getAttribute(name: string): string | null;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): Iterable<DomElement>;
  getBBox(): DomBox;
  getBoundingClientRect(): DomBox;
}
declare const document: { getElementById(id: string): DomElement | null };

const UNITS: Record<string, number> = { B: 1, kB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 };

export interface ChartGeometry {
  /** Value-axis labels and where they sit (SVG user units). */
  ticks: { label: string; y: number }[];
  /** Stacked bars, left to right: each segment's height. */
  bars: { x: number; width: number; peers: number; cdn: number }[];
  /** The offload line's bounding box, if drawn. */
  line: { top: number; bottom: number; width: number } | null;
  width: number;
  height: number;
}

/** What Chromium actually laid out for a chart, read with getBBox (independent of CSS scaling). */
export async function chartGeometry(page: Page, id: string): Promise<ChartGeometry> {
  return page.evaluate((chartId) => {
    const svg = document.getElementById(chartId)!;
    const box = (el: DomElement) => el.getBBox();
    const ticks = [...svg.querySelectorAll('text.tick-y')].map((t) => ({ label: t.textContent ?? '', y: Number(t.getAttribute('y')) }));
    const bars = [...svg.querySelectorAll('g.bars > g')].map((g) => {
      const p = g.querySelector('rect.bar-peers');
      const c = g.querySelector('rect.bar-cdn');
      const any = box((p ?? c)!);
      return { x: any.x, width: any.width, peers: p ? box(p).height : 0, cdn: c ? box(c).height : 0 };
    });
    const path = svg.querySelector('path.series');
    const lb = path ? box(path) : null;
    const rect = svg.getBoundingClientRect();
    return { ticks, bars, line: lb ? { top: lb.y, bottom: lb.y + lb.height, width: lb.width } : null, width: rect.width, height: rect.height };
  }, id);
}

/** Value per SVG unit and the zero line, from the axis labels Chromium shows. */
export function scaleOf(ticks: { label: string; y: number }[], parse: (label: string) => number): { perUnit: number; zeroY: number } {
  const values = ticks.map((t) => ({ v: parse(t.label), y: t.y }));
  const zero = values.find((t) => t.v === 0)!;
  const top = values.reduce((a, b) => (b.v > a.v ? b : a));
  return { perUnit: top.v / (zero.y - top.y), zeroY: zero.y };
}

export const parseBytes = (label: string) => {
  const m = /^([\d.,]+) (B|kB|MB|GB|TB)$/.exec(label)!;
  return Number(m[1]!.replace(/,/g, '')) * UNITS[m[2]!]!;
};
export const parsePercent = (label: string) => Number(label.replace('%', '')) / 100;
