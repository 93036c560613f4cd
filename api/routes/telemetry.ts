// The telemetry routes of telemetry-api.md: stream list and summaries, stream metrics,
// platform-wide metrics (operators), bucketed series and exports. Every read is scoped to the
// caller's customerId (stream id prefix); figures come from the loaded snapshot.
import type { Router, RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import { assertStreamAccess, callerOf, canSee, requireCapability } from '../auth.ts';
import { problems } from '../errors.ts';
import { sendSnapshotJson, setSnapshotHeaders, snapshotEtag, notModified } from '../http-cache.ts';
import { parseQuery } from '../query.ts';
import { ExportQuery, PlatformMetricsQuery, StreamIdQuery, StreamMetricsQuery, StreamsQuery, TimeseriesQuery } from '../schemas/telemetry.ts';
import { bucketRange, windowSeries } from '../timeseries.ts';
import { EXPORT_MEDIA, exportFileName, startExport } from '../export/export.ts';
import type { SummaryJson } from '../snapshot-store.ts';
import { snapshotOf } from '../request-context.ts';
import type { ApiDeps } from '../deps.ts';
import { STANDARD_BUCKET_SECONDS } from '../../warehouse/windows.ts';

const METRIC_FIELDS = ['totalSessions', 'totalBytesOffloaded', 'totalBytesFallback', 'avgOffloadRatio', 'avgPeerCount', 'avgBufferHealth'] as const;

function metricsOf(streamId: string, s: SummaryJson | undefined) {
  const out: Record<string, unknown> = { streamId };
  for (const f of METRIC_FIELDS) out[f] = s ? s[f] : 0;
  return out;
}

function streamParam(ctx: Context): string {
  return String((ctx.params as Record<string, string>)['streamId']);
}

/** `operators`: the operator router (routes/operator.ts), for the platform-wide metrics. */
export function telemetryRoutes(router: Router, deps: ApiDeps, auth: RouterMiddleware, operators: Router): void {
  router.get('/telemetry/streams', auth, (ctx) => {
    const caller = callerOf(ctx);
    requireCapability(caller, 'telemetry:read');
    const { window, detail } = parseQuery(ctx, StreamsQuery);
    const snap = snapshotOf(ctx);
    const scope = caller.role === 'tenant' ? caller.customerId : '*';
    sendSnapshotJson(ctx, snap, `streams|${scope}|${window}|${detail ? 1 : 0}`, () => {
      const list = [...snap.summaries.get(window)!.values()].filter((s) => canSee(caller, s.streamId));
      return { window, asOf: snap.manifest.asOf, streams: detail ? list : list.map((s) => s.streamId) };
    });
  });

  operators.get('/telemetry/metrics', (ctx) => {
    const { window, groupBy } = parseQuery(ctx, PlatformMetricsQuery);
    const byCustomer = groupBy === 'customer';
    const snap = snapshotOf(ctx);
    sendSnapshotJson(ctx, snap, `platform|${window}|${byCustomer}`, () => ({
      window,
      asOf: snap.manifest.asOf,
      ...snap.platform.get(window)!,
      ...(byCustomer
        ? { customers: [...snap.customerRows.get(window)!.entries()].map(([customerId, row]) => ({ customerId, ...row })) }
        : {}),
    }));
  });

  router.get('/telemetry/metrics/:streamId', auth, (ctx) => {
    const caller = callerOf(ctx);
    requireCapability(caller, 'telemetry:read');
    const streamId = streamParam(ctx);
    assertStreamAccess(caller, streamId);
    const { window } = parseQuery(ctx, StreamMetricsQuery);
    const snap = snapshotOf(ctx);
    if (!snap.knows(streamId)) throw problems.streamNotFound();
    sendSnapshotJson(ctx, snap, `metrics|${streamId}|${window}`, () => ({
      ...metricsOf(streamId, snap.summaries.get(window)!.get(streamId)),
      window,
      asOf: snap.manifest.asOf,
    }));
  });

  router.get('/telemetry/timeseries', auth, async (ctx) => {
    const caller = callerOf(ctx);
    requireCapability(caller, 'telemetry:read');
    const { streamId } = parseQuery(ctx, StreamIdQuery);
    if (streamId === undefined) throw problems.streamIdRequired('a series');
    assertStreamAccess(caller, streamId);
    const { bucketSeconds, window } = parseQuery(ctx, TimeseriesQuery);
    const snap = snapshotOf(ctx);
    if (!snap.knows(streamId)) throw problems.streamNotFound();
    const key = `series|${streamId}|${window}|${bucketSeconds}`;
    const standard = (STANDARD_BUCKET_SECONDS as readonly number[]).includes(bucketSeconds);
    let rows = standard ? snap.series.get(streamId)?.get(bucketSeconds) ?? [] : null;
    if (rows === null && !snap.responses.has(key)) {
      // Refuse an oversized range before computing anything (the minute series locates `all`).
      bucketRange(snap.series.get(streamId)?.get(60) ?? [], snap.asOfMs, window, bucketSeconds);
      rows = await deps.onDemand.series(snap, streamId, bucketSeconds);
    }
    sendSnapshotJson(ctx, snap, key, () => windowSeries(streamId, rows ?? [], snap.asOfMs, window, bucketSeconds));
  });

  router.get('/telemetry/export', auth, async (ctx) => {
    const caller = callerOf(ctx);
    requireCapability(caller, 'telemetry:read');
    const { streamId } = parseQuery(ctx, StreamIdQuery);
    if (streamId === undefined) throw problems.streamIdRequired('an export');
    assertStreamAccess(caller, streamId);
    const { window, format } = parseQuery(ctx, ExportQuery);
    const snap = snapshotOf(ctx);
    if (!snap.knows(streamId)) throw problems.streamNotFound();
    const etag = snapshotEtag(snap, `export|${streamId}|${window}|${format}`);
    setSnapshotHeaders(ctx, snap, etag);
    if (notModified(ctx, etag)) {
      ctx.status = 304;
      return;
    }
    const body = await startExport(deps.db, deps.layout, snap, streamId, window, format);
    ctx.set('Content-Disposition', `attachment; filename="${exportFileName(streamId, window, format)}"`);
    ctx.type = EXPORT_MEDIA[format].type;
    ctx.body = body;
  });
}
