// A stream's page (`/portal/streams/:streamId`): its headline figures (with filters, those of the
// sessions they keep), charts over the window, the breakdown by the chosen dimension (each row a
// link that adds it as a filter), its exports, and its pilot report with the verdict.
import type { Context } from 'koa';
import { BREAKDOWN_DIMENSIONS } from '../../warehouse/breakdowns.ts';
import { EXPORT_FORMATS } from '../../api/export/export.ts';
import { formatBytes, formatInteger, formatMs, formatPercent, formatUsd } from '../../pilot/format.ts';
import { headlineTiles } from '../tiles.ts';
import { stateQuery, type PageState } from '../page-state.ts';
import type { BreakdownRow, PageReads, StreamSummary } from '../figures.ts';
import { addFilterHref, chartData, pageFrame, type Viewer } from './common.ts';
import { ApiRefusal } from '../api-client.ts';

export async function streamView(ctx: Context, reads: PageReads, state: PageState, viewer: Viewer, streamId: string) {
  const [metrics, previous, all, series, rows] = await Promise.all([
    reads.metrics(streamId, state),
    reads.previousMetrics(streamId, state),
    reads.streams('all'),
    reads.series(streamId, state, true),
    reads.breakdown(streamId, state.by, state),
  ]);
  const summary: StreamSummary | undefined = all.find((s) => s.streamId === streamId);
  const base = ctx.path;
  return {
    ...pageFrame(ctx, state, viewer, 'overview'),
    title: streamId,
    streamId,
    asOf: metrics.asOf,
    live: summary?.live ?? false,
    lastSeenAt: summary?.lastSeenAt ?? null,
    tiles: headlineTiles(metrics, summary?.activePeers ?? 0, previous),
    filtered: state.filters.length > 0,
    chart: chartData(series),
    dimensions: BREAKDOWN_DIMENSIONS.map((d) => ({ name: d, current: d === state.by, href: `${base}${stateQuery(state, { by: d })}` })),
    by: state.by,
    breakdown: breakdownRows(rows, base, state),
    exports: EXPORT_FORMATS.map((f) => ({ format: f, href: `${base}/export?format=${f}&window=${state.apiWindow}` })),
    report: reportLinks(base),
  };
}

function breakdownRows(rows: readonly BreakdownRow[], base: string, state: PageState) {
  return rows.map((r) => ({
    value: r.value,
    label: r.value === null ? '(none)' : r.value,
    keepHref: addFilterHref(base, state, state.by, r.value),
    dropHref: addFilterHref(base, state, state.by, r.value, true),
    sessions: formatInteger(r.totalSessions),
    p2p: formatBytes(r.totalBytesOffloaded),
    cdn: formatBytes(r.totalBytesFallback),
    offload: formatPercent(r.avgOffloadRatio),
    rebufferRatio: formatPercent(r.rebufferRatio ?? null, 2),
    startupP95: formatMs(r.startupTimeP95Ms ?? null),
    p2pSuccess: formatPercent(r.p2pConnectionSuccess ?? null),
    bufferHealth: `${(r.avgBufferHealth ?? 0).toFixed(1)} s`,
  }));
}

function reportLinks(base: string) {
  return [
    { label: 'HTML', href: `${base}/report.html` },
    { label: 'Markdown', href: `${base}/report.md` },
    { label: 'JSON', href: `${base}/report.json` },
    { label: 'signature (JWS)', href: `${base}/report.jws` },
  ];
}

interface ReportJson {
  conclusion: { assessment: 'pass' | 'review'; requiredFixes: string[] };
  cost: { netSavings: number; avoidedCdnCost: number; offloadedGb: number; assumedRate: boolean };
  metadata?: { dateRange?: { from?: string; to?: string } };
}

/** A stream's latest pilot report's verdict and savings (the API's JSON report), or why there is none. */
export async function reportVerdict(reads: PageReads, streamId: string) {
  try {
    const r = await reads.get<ReportJson>(`/control/reports/pilot/${encodeURIComponent(streamId)}?format=json`);
    return {
      assessment: r.conclusion.assessment,
      requiredFixes: r.conclusion.requiredFixes,
      netSavings: formatUsd(r.cost.netSavings),
      avoidedCdnCost: formatUsd(r.cost.avoidedCdnCost),
      assumedRate: r.cost.assumedRate,
      error: null,
    };
  } catch (err) {
    if (err instanceof ApiRefusal && err.status !== 403) return { assessment: null, error: err.problem.detail ?? err.message };
    throw err;
  }
}
