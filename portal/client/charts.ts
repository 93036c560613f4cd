// The portal's charts, drawn with uPlot from the JSON data block beside each chart (the page's
// series as the API answered it): bytes from peers and from the CDN stacked, with the offload ratio
// on its own axis; sessions; rebuffer events; buffer health and peer count.
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
