// The headline tiles of a page (sessions, active peers, bytes from peers and the CDN, offload,
// rebuffering, startup, P2P success), each with its change against the previous period where the
// series can say it exactly (additive figures over the same number of whole buckets).
import { formatBytes, formatInteger, formatMs, formatPercent, formatPointsDelta } from '../pilot/format.ts';
import type { Figures, PeriodTotals } from './figures.ts';

export interface Tile {
  id: string;
  label: string;
  value: string;
  /** The change against the previous period, worded, or null when none is known. */
  change: string | null;
  /** up / down / flat, for the change's colour. */
  trend: 'up' | 'down' | 'flat' | null;
  /** What the figure means (a title), from session-report.md's definitions. */
  help: string;
}

const pctChange = (now: number, before: number): { change: string; trend: Tile['trend'] } | null => {
  if (before === 0) return null;
  const r = (now - before) / before;
  return { change: `${r > 0 ? '+' : ''}${(r * 100).toFixed(1)} % vs previous period`, trend: r > 0.0005 ? 'up' : r < -0.0005 ? 'down' : 'flat' };
};

function tile(id: string, label: string, value: string, help: string, change: { change: string; trend: Tile['trend'] } | null = null): Tile {
  return { id, label, value, help, change: change?.change ?? null, trend: change?.trend ?? null };
}

const ratio = (off: number, fb: number) => (off + fb === 0 ? 0 : off / (off + fb));

/**
 * The tiles of a page: `figures` from the summary or metrics route, `activePeers` from the stream
 * summaries, `now` and `previous` the series' totals of this window and of the one before (the
 * changes; none without a previous period).
 */
export function headlineTiles(figures: Figures, activePeers: number, now: PeriodTotals | null, previous: PeriodTotals | null): Tile[] {
  const f = figures;
  const has = now !== null && previous !== null;
  const offloadNow = has ? ratio(now.bytesOffloaded, now.bytesFallback) : 0;
  const offloadBefore = has ? ratio(previous.bytesOffloaded, previous.bytesFallback) : 0;
  const ratioChange = has && previous.bytesOffloaded + previous.bytesFallback > 0 ? { change: `${formatPointsDelta(offloadNow - offloadBefore)} vs previous period`, trend: offloadNow > offloadBefore ? ('up' as const) : offloadNow < offloadBefore ? ('down' as const) : ('flat' as const) } : null;
  return [
    tile('sessions', 'Sessions', formatInteger(f.totalSessions), 'Distinct sessions with a report in the window'),
    tile('active-peers', 'Active peers now', formatInteger(activePeers), 'Sessions whose latest report is at most 120 s old and not final'),
    tile('bytes-p2p', 'From peers', formatBytes(f.totalBytesOffloaded), 'Bytes delivered by peers', has ? pctChange(now.bytesOffloaded, previous.bytesOffloaded) : null),
    tile('bytes-cdn', 'From the CDN', formatBytes(f.totalBytesFallback), 'Bytes delivered by the CDN', has ? pctChange(now.bytesFallback, previous.bytesFallback) : null),
    tile('offload', 'Offload ratio', formatPercent(f.avgOffloadRatio), 'Peer bytes / all bytes, byte-weighted', ratioChange),
    tile('rebuffer', 'Rebuffer ratio', formatPercent(f.rebufferRatio ?? null, 2), 'Σ stall time / (Σ watch time + Σ stall time)'),
    tile('startup', 'Startup p95', formatMs(f.startupTimeP95Ms ?? null), '95th percentile of time to first frame over the sessions that have one'),
    tile('p2p-success', 'P2P connection success', formatPercent(f.p2pConnectionSuccess ?? null), 'Σ P2P connections established / Σ attempted'),
  ];
}
