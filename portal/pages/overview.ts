// The overview (`/portal/`): a customer's headline figures for the window with their change
// against the previous period (the API's `period=previous`), its streams table (sortable, live flag, last seen), and a chart of
// bytes from peers and from the CDN with the offload ratio; for an operator without a chosen
// tenant, the platform's.
import type { Context } from 'koa';
import { formatBytes, formatInteger, formatPercent } from '../../pilot/human-format.ts';
import { streamBelongsTo } from '../../warehouse/ids.ts';
import { headlineTiles } from '../tiles.ts';
import { stateQuery, type PageState, type SortColumn } from '../page-state.ts';
import type { PageReads, StreamSummary } from '../figures.ts';
import { chartData, pageFrame, type Viewer } from './common.ts';

/** The chart of a customer adds up this many of its streams at most (those with most sessions). */
export const CHART_STREAMS_MAX = 100;

export async function overviewView(ctx: Context, reads: PageReads, state: PageState, viewer: Viewer) {
  const customerId = viewer.role === 'operator' ? (viewer.customerId ?? undefined) : undefined;
  const [summary, previous, listed] = await Promise.all([reads.summary(state, customerId), reads.previousSummary(state, customerId), reads.streams(state.apiWindow, state.filters)]);
  const streams = viewer.customerId === null ? listed : listed.filter((s) => streamBelongsTo(s.streamId, viewer.customerId!));
  const charted = [...streams].sort((a, b) => b.totalSessions - a.totalSessions || a.streamId.localeCompare(b.streamId)).slice(0, CHART_STREAMS_MAX);
  const series = await reads.tenantSeries(charted.map((s) => s.streamId), state);
  return {
    ...pageFrame(ctx, state, viewer, viewer.role === 'operator' && viewer.customerId === null ? 'platform' : 'overview'),
    title: viewer.customerId === null ? 'Platform' : `Overview of ${viewer.customerId}`,
    asOf: summary.asOf,
    tiles: headlineTiles(summary, summary.activePeers, previous),
    filtered: state.filters.length > 0,
    streams: streamRows(streams, state),
    headers: sortHeaders(ctx.path, state),
    chart: chartData(series),
    chartNote: streams.length > charted.length ? `the ${charted.length} streams with most sessions of ${streams.length}` : null,
  };
}

const COLUMNS: { key: SortColumn; label: string; numeric: boolean }[] = [
  { key: 'streamId', label: 'Stream', numeric: false },
  { key: 'totalSessions', label: 'Sessions', numeric: true },
  { key: 'totalBytesOffloaded', label: 'From peers', numeric: true },
  { key: 'totalBytesFallback', label: 'From the CDN', numeric: true },
  { key: 'avgOffloadRatio', label: 'Offload', numeric: true },
  { key: 'activePeers', label: 'Active peers', numeric: true },
  { key: 'lastSeenAt', label: 'Last seen', numeric: false },
];

function sortHeaders(base: string, state: PageState) {
  return COLUMNS.map((c) => {
    const current = state.sort === c.key;
    const dir = current && state.dir === 'asc' ? 'desc' : current ? 'asc' : c.numeric || c.key === 'lastSeenAt' ? 'desc' : 'asc';
    return { ...c, current, ariaSort: current ? (state.dir === 'asc' ? 'ascending' : 'descending') : 'none', href: `${base}${stateQuery(state, { sort: c.key, dir })}` };
  });
}

function compare(a: StreamSummary, b: StreamSummary, key: SortColumn): number {
  const x = a[key];
  const y = b[key];
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  return String(x ?? '').localeCompare(String(y ?? ''));
}

function streamRows(streams: readonly StreamSummary[], state: PageState) {
  const sign = state.dir === 'asc' ? 1 : -1;
  return [...streams]
    .sort((a, b) => sign * compare(a, b, state.sort) || a.streamId.localeCompare(b.streamId))
    .map((s) => ({
      streamId: s.streamId,
      href: `/portal/streams/${encodeURIComponent(s.streamId)}${stateQuery({ ...state, sort: 'streamId', dir: 'asc' })}`,
      sessions: formatInteger(s.totalSessions),
      p2p: formatBytes(s.totalBytesOffloaded),
      cdn: formatBytes(s.totalBytesFallback),
      offload: formatPercent(s.avgOffloadRatio),
      activePeers: formatInteger(s.activePeers),
      live: s.live,
      lastSeenAt: s.lastSeenAt,
    }));
}
