// The headline tiles of a page (sessions, active peers, bytes from peers and the CDN, offload,
// rebuffering, startup, P2P success), each with its change against the previous period: the API's
// figures of the period of the window's length that ends where the window starts (`period=previous`
// on the summary and metrics routes), with the same filters.
import { formatBytes, formatInteger, formatMs, formatPercent, formatPointsDelta } from '../pilot/human-format.ts';
import type { Figures, PreviousFigures } from './figures.ts';

export interface Tile {
  id: string;
  label: string;
  value: string;
  /** The change against the previous period, worded, or null when none is known. */
  change: string | null;
  /** Whether the change is for the better, the worse, or neither: the change's colour. */
  trend: 'good' | 'bad' | 'flat' | null;
  /** What the figure means (a title), from docs/metrics.md's definitions. */
  help: string;
}


type Change = { change: string; trend: Tile['trend'] } | null;
/** Which way a figure is better: up (sessions, offload) or down (rebuffering, startup time); none for bytes from the CDN alone. */
type Better = 'up' | 'down' | null;

const trendOf = (delta: number, better: Better, epsilon: number): Tile['trend'] =>
  Math.abs(delta) <= epsilon || better === null ? 'flat' : (delta > 0) === (better === 'up') ? 'good' : 'bad';

/** A relative change (+12.3 %), none when the previous figure is 0 or unknown. */
function pctChange(now: number | null | undefined, before: number | null | undefined, better: Better): Change {
  if (now === null || now === undefined || before === null || before === undefined || before === 0) return null;
  const r = (now - before) / before;
  return { change: `${r > 0 ? '+' : ''}${(r * 100).toFixed(1)} % vs previous period`, trend: trendOf(r, better, 0.0005) };
}

/** A change of a ratio in percentage points, none when either is unknown. */
function pointsChange(now: number | null | undefined, before: number | null | undefined, better: Better, digits = 1): Change {
  if (now === null || now === undefined || before === null || before === undefined) return null;
  return { change: `${formatPointsDelta(now - before, digits)} vs previous period`, trend: trendOf(now - before, better, 1e-9) };
}

function tile(id: string, label: string, value: string, help: string, change: Change = null): Tile {
  return { id, label, value, help, change: change?.change ?? null, trend: change?.trend ?? null };
}

/**
 * The tiles of a page: `figures` from the summary or metrics route, `activePeers` from the stream
 * summaries, `previous` the same route's answer for the previous period (null: none, as for `all`).
 */
export function headlineTiles(figures: Figures, activePeers: number, previous: PreviousFigures | null): Tile[] {
  const f = figures;
  const p = previous;
  // A previous period without any session has no change to show.
  const had = p !== null && p.totalSessions > 0;
  const bytesBefore = had ? p.totalBytesOffloaded + p.totalBytesFallback : 0;
  return [
    tile('sessions', 'Sessions', formatInteger(f.totalSessions), 'Distinct sessions with a report in the window', had ? pctChange(f.totalSessions, p.totalSessions, 'up') : null),
    tile('active-peers', 'Active peers now', formatInteger(activePeers), 'Sessions whose latest report is at most 120 s old and not final (change: against those active at the end of the previous period)', p ? pctChange(activePeers, p.activePeers, 'up') : null),
    tile('bytes-p2p', 'From peers', formatBytes(f.totalBytesOffloaded), 'Bytes delivered by peers', had ? pctChange(f.totalBytesOffloaded, p.totalBytesOffloaded, 'up') : null),
    tile('bytes-cdn', 'From the CDN', formatBytes(f.totalBytesFallback), 'Bytes delivered by the CDN', had ? pctChange(f.totalBytesFallback, p.totalBytesFallback, null) : null),
    tile('offload', 'Offload ratio', formatPercent(f.avgOffloadRatio), 'Peer bytes / all bytes, byte-weighted', had && bytesBefore > 0 ? pointsChange(f.avgOffloadRatio, p.avgOffloadRatio, 'up') : null),
    tile('rebuffer', 'Rebuffer ratio', formatPercent(f.rebufferRatio ?? null, 2), 'Σ stall time / (Σ watch time + Σ stall time)', had ? pointsChange(f.rebufferRatio, p.rebufferRatio, 'down', 2) : null),
    tile('startup', 'Startup p95', formatMs(f.startupTimeP95Ms ?? null), '95th percentile of time to first frame over the sessions that have one', had ? pctChange(f.startupTimeP95Ms, p.startupTimeP95Ms, 'down') : null),
    tile('p2p-success', 'P2P connection success', formatPercent(f.p2pConnectionSuccess ?? null), 'Σ P2P connections established / Σ attempted', had ? pointsChange(f.p2pConnectionSuccess, p.p2pConnectionSuccess, 'up') : null),
  ];
}
