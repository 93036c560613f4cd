// A stream's page (`/portal/streams/:streamId`): its headline figures (with filters, those of the
// sessions they keep), charts over the window, the breakdown by the chosen dimension (each row a
// link that adds it as a filter), its exports, and its pilot report with the verdict (the latest
// published one, or one made now when no nightly run published any).
import type { Context } from 'koa';
import { BREAKDOWN_DIMENSIONS } from '../../warehouse/reads/index.ts';
import { EXPORT_FORMATS } from '../../api/export/export.ts';
import { formatBytes, formatInteger, formatMs, formatPercent, formatUsd } from '../../pilot/human-format.ts';
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

/** The report's links: the published one's files (`?source=published`) when the verdict is from it. */
export function reportLinks(base: string, published: boolean) {
  const q = published ? '?source=published' : '';
  return [
    { label: 'HTML', href: `${base}/report.html${q}` },
    { label: 'Markdown', href: `${base}/report.md${q}` },
    { label: 'JSON', href: `${base}/report.json${q}` },
    { label: 'signature (JWS)', href: `${base}/report.jws${q}` },
  ];
}

interface ReportJson {
  snapshot: { id: string; asOf: string };
  conclusion: { assessment: 'pass' | 'review'; requiredFixes: string[] };
  cost: { netSavings: number; avoidedCdnCost: number; offloadedGb: number; assumedRate: boolean };
  metadata?: { dateRange?: { from?: string; to?: string } };
}

/**
 * A stream's pilot report's verdict and savings: the latest one a nightly run published (the API's
 * `source=published`, a file read), or, when none was, the report at the served snapshot (composed
 * on demand by the API); or why there is none.
 */
export async function reportVerdict(reads: PageReads, streamId: string) {
  const path = `/control/reports/pilot/${encodeURIComponent(streamId)}?format=json`;
  try {
    let published = true;
    const r = await reads.revalidated<ReportJson>(`${path}&source=published`).catch((err: unknown) => {
      if (!(err instanceof ApiRefusal && err.problem.code === 'report_not_published')) throw err;
      published = false;
      return reads.revalidated<ReportJson>(path);
    });
    return {
      assessment: r.conclusion.assessment,
      requiredFixes: r.conclusion.requiredFixes,
      netSavings: formatUsd(r.cost.netSavings),
      avoidedCdnCost: formatUsd(r.cost.avoidedCdnCost),
      assumedRate: r.cost.assumedRate,
      published,
      asOf: r.snapshot.asOf,
      error: null,
    };
  } catch (err) {
    if (err instanceof ApiRefusal && err.status !== 403) return { assessment: null, published: false, error: err.problem.detail ?? err.message };
    throw err;
  }
}
