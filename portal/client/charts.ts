// The portal's charts, drawn with uPlot from the JSON data block beside each chart (the page's
// series as the API answered it): bytes from peers and from the CDN stacked, with the offload ratio
// on its own axis; sessions; rebuffer events; the rebuffer ratio over its quality bands; startup
// p95; buffer health and peer count.
import uPlot from 'uplot';

interface ChartData {
  bucketSeconds: number;
  x: number[];
  sessions: number[];
  bytesOffloaded: number[];
  bytesFallback: number[];
  offloadRatio: number[];
  rebufferEvents: number[];
  avgBufferHealth: number[];
  avgPeerCount: number[];
  /** A stream's page only: null where a bucket has no watch time or no startup. */
  rebufferRatio?: (number | null)[];
  startupP95?: (number | null)[];
}

/** The rebuffer ratio's bands (docs/portal.md): good under 1 %, acceptable 1–3 %, poor above. */
const BANDS: { from: number; to: number; color: string }[] = [
  { from: 0, to: 0.01, color: 'rgba(27, 127, 91, 0.12)' },
  { from: 0.01, to: 0.03, color: 'rgba(214, 160, 30, 0.16)' },
  { from: 0.03, to: Number.POSITIVE_INFINITY, color: 'rgba(180, 40, 31, 0.12)' },
];

/** Draws the bands behind the series, between the y values of each (clipped to the plot). */
function drawBands(u: uPlot): void {
  const { left, top, width, height } = u.bbox;
  const ctx = u.ctx;
  ctx.save();
  for (const b of BANDS) {
    const y0 = Math.min(top + height, Math.max(top, u.valToPos(b.from, 'y', true)));
    const y1 = Math.min(top + height, Math.max(top, u.valToPos(Math.min(b.to, u.scales['y']!.max ?? 1), 'y', true)));
    ctx.fillStyle = b.color;
    ctx.fillRect(left, y1, width, y0 - y1);
  }
  ctx.restore();
}

const P2P = '#1b7f5b';
const CDN = '#b4531f';
const LINE = '#1f4e8c';
const UNITS: [number, string][] = [
  [1e12, 'TB'],
  [1e9, 'GB'],
  [1e6, 'MB'],
  [1e3, 'kB'],
];

function bytes(v: number | null): string {
  if (v === null || !Number.isFinite(v)) return '–';
  for (const [size, unit] of UNITS) if (Math.abs(v) >= size) return `${(v / size).toFixed(2)} ${unit}`;
  return `${Math.round(v)} B`;
}
const percent = (v: number | null) => (v === null || !Number.isFinite(v) ? '–' : `${(v * 100).toFixed(1)} %`);
const count = (v: number | null) => (v === null || !Number.isFinite(v) ? '–' : Math.round(v).toLocaleString('en-US'));

const bars = () => uPlot.paths.bars!({ size: [0.8, 64], align: 0 });

function options(kind: string, d: ChartData, width: number): uPlot.Options {
  const base = { width, height: 220, cursor: { drag: { x: false, y: false } }, scales: { x: { time: true } } };
  if (kind === 'bytes') {
    const total = d.bytesOffloaded.map((v, i) => v + (d.bytesFallback[i] ?? 0));
    return {
      ...base,
      scales: { ...base.scales, ratio: { range: [0, 1] } },
      axes: [{}, { values: (_u, ticks) => ticks.map((t) => bytes(t)), size: 70 }, { scale: 'ratio', side: 1, grid: { show: false }, values: (_u, ticks) => ticks.map((t) => percent(t)) }],
      series: [
        {},
        { label: 'From the CDN', stroke: CDN, fill: CDN, paths: bars(), value: (_u, _v, _s, i) => bytes(i === null ? null : (d.bytesFallback[i] ?? null)), points: { show: false } },
        { label: 'From peers', stroke: P2P, fill: P2P, paths: bars(), value: (_u, v) => bytes(v), points: { show: false } },
        { label: 'Offload ratio', stroke: LINE, width: 2, scale: 'ratio', value: (_u, v) => percent(v) },
      ],
      // The CDN bars stand on the peers' bars: drawn at peers + CDN, under the peers' bars.
      ...{ data: [d.x, total, d.bytesOffloaded, d.offloadRatio] },
    } as uPlot.Options;
  }
  if (kind === 'sessions') return { ...base, series: [{}, { label: 'Sessions', stroke: LINE, width: 2, value: (_u, v) => count(v) }] };
  if (kind === 'rebuffer-ratio') {
    return {
      ...base,
      // At least up to 4 %, so that the three bands show even when every bucket is good.
      scales: { ...base.scales, y: { range: (_u, _min, max) => [0, Math.max(0.04, max * 1.1)] } },
      axes: [{}, { values: (_u, ticks) => ticks.map((t) => percent(t)), size: 60 }],
      hooks: { drawClear: [drawBands] },
      series: [{}, { label: 'Rebuffer ratio', stroke: CDN, width: 2, value: (_u, v) => (v === null ? '–' : `${(v * 100).toFixed(2)} %`), spanGaps: false }],
    };
  }
  if (kind === 'startup') {
    return {
      ...base,
      axes: [{}, { values: (_u, ticks) => ticks.map((t) => `${Math.round(t)} ms`), size: 70 }],
      series: [{}, { label: 'Startup p95', stroke: LINE, width: 2, value: (_u, v) => (v === null ? '–' : `${Math.round(v)} ms`), spanGaps: false }],
    };
  }
  if (kind === 'rebuffer') return { ...base, series: [{}, { label: 'Rebuffer events', stroke: CDN, fill: CDN, paths: bars(), value: (_u, v) => count(v), points: { show: false } }] };
  return {
    ...base,
    scales: { ...base.scales, peers: {} },
    axes: [{}, { values: (_u, ticks) => ticks.map((t) => `${t} s`) }, { scale: 'peers', side: 1, grid: { show: false } }],
    series: [{}, { label: 'Buffer health (s)', stroke: LINE, width: 2, value: (_u, v) => (v === null ? '–' : `${v.toFixed(1)} s`) }, { label: 'Peers', stroke: P2P, width: 2, scale: 'peers', value: (_u, v) => (v === null ? '–' : v.toFixed(2)) }],
  };
}

function dataOf(kind: string, d: ChartData): uPlot.AlignedData {
  if (kind === 'bytes') return [d.x, d.bytesOffloaded.map((v, i) => v + (d.bytesFallback[i] ?? 0)), d.bytesOffloaded, d.offloadRatio];
  if (kind === 'sessions') return [d.x, d.sessions];
  if (kind === 'rebuffer') return [d.x, d.rebufferEvents];
  if (kind === 'rebuffer-ratio') return [d.x, d.rebufferRatio ?? []];
  if (kind === 'startup') return [d.x, d.startupP95 ?? []];
  return [d.x, d.avgBufferHealth, d.avgPeerCount];
}

const drawn = new Set<uPlot>();

/** Draws every chart of `root`, replacing those drawn before. */
export function drawCharts(root: ParentNode): void {
  for (const u of drawn) u.destroy();
  drawn.clear();
  for (const el of root.querySelectorAll<HTMLElement>('[data-chart]')) {
    const source = document.getElementById(el.dataset['source'] ?? '');
    if (!source?.textContent) continue;
    const d = JSON.parse(source.textContent) as ChartData;
    const kind = el.dataset['chart'] ?? 'sessions';
    const opts = options(kind, d, Math.max(280, el.clientWidth));
    delete (opts as { data?: unknown }).data;
    drawn.add(new uPlot(opts, dataOf(kind, d), el));
  }
}

let resizeTimer: number | undefined;
window.addEventListener('resize', () => {
  window.clearTimeout(resizeTimer);
  resizeTimer = window.setTimeout(() => drawCharts(document), 200);
});
