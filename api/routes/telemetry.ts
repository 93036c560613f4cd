// The telemetry routes of telemetry-api.md: stream list and summaries, stream metrics,
// platform-wide metrics (operators), bucketed series and exports. Every read is scoped to the
// caller's customerId (stream id prefix); figures come from the loaded snapshot.
import type { Router, RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import { assertStreamAccess, callerOf, canSee, requireCapability, requireOperator } from '../auth.ts';
import { problems } from '../errors.ts';
import { sendSnapshotJson, sendSnapshotJsonText, setSnapshotHeaders, snapshotEtag, etagMatches } from '../http-cache.ts';
import { bucketSecondsParam, detailParam, enumParam, queryOf, streamIdParam, windowParam } from '../query.ts';
import { bucketRange, windowSeries } from '../timeseries.ts';
import { EXPORT_FORMATS, EXPORT_MEDIA, exportFileName, startExport } from '../export/export.ts';
import type { ServedSnapshot, SummaryJson } from '../snapshot-store.ts';
import type { ApiDeps } from '../deps.ts';
import { STANDARD_BUCKET_SECONDS } from '../../warehouse/windows.ts';

/** The snapshot this request is served from (captured once, when the request started). */
export function snapshotOf(ctx: Context): ServedSnapshot {
  const snap = ctx.state['snapshot'] as ServedSnapshot | null | undefined;
  if (!snap) throw problems.snapshotUnavailable();
  return snap;
}

const METRIC_FIELDS = ['totalSessions', 'totalBytesOffloaded', 'totalBytesFallback', 'avgOffloadRatio', 'avgPeerCount', 'avgBufferHealth'] as const;

function metricsOf(streamId: string, s: SummaryJson | undefined) {
  const out: Record<string, unknown> = { streamId };
  for (const f of METRIC_FIELDS) out[f] = s ? s[f] : 0;
  return out;
}

function streamParam(ctx: Context): string {
  return String((ctx.params as Record<string, string>)['streamId']);
}

export function telemetryRoutes(router: Router, deps: ApiDeps, auth: RouterMiddleware): void {
  router.get('/telemetry/streams', auth, (ctx) => {
    const caller = callerOf(ctx);
    requireCapability(caller, 'telemetry:read');
    const window = windowParam(queryOf(ctx));
    const detail = detailParam(queryOf(ctx));
    const snap = snapshotOf(ctx);
    const scope = caller.role === 'tenant' ? caller.customerId : '*';
    sendSnapshotJson(ctx, snap, `streams|${scope}|${window}|${detail ? 1 : 0}`, () => {
      const list = [...snap.summaries.get(window)!.values()].filter((s) => canSee(caller, s.streamId));
      return { window, asOf: snap.manifest.asOf, streams: detail ? list : list.map((s) => s.streamId) };
    });
  });

  router.get('/telemetry/metrics', auth, (ctx) => {
    const caller = callerOf(ctx);
    requireOperator(caller);
    requireCapability(caller, 'telemetry:read');
    const window = windowParam(queryOf(ctx));
    const byCustomer = enumParam(queryOf(ctx), 'groupBy', ['customer'], null) === 'customer';
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
    const window = windowParam(queryOf(ctx));
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
    const streamId = streamIdParam(queryOf(ctx));
    if (streamId === undefined) throw problems.streamIdRequired('a series');
    assertStreamAccess(caller, streamId);
    const bucketSeconds = bucketSecondsParam(queryOf(ctx));
    const window = windowParam(queryOf(ctx));
    const snap = snapshotOf(ctx);
    if (!snap.knows(streamId)) throw problems.streamNotFound();
    const key = `series|${streamId}|${window}|${bucketSeconds}`;
    const standard = (STANDARD_BUCKET_SECONDS as readonly number[]).includes(bucketSeconds);
    await sendSnapshotJsonText(ctx, snap, key, async () => {
      if (standard) return deps.series.windowJson(snap, streamId, window, bucketSeconds);
      // Refuse an oversized range before computing anything (the first minute locates `all`).
      bucketRange(window === 'all' ? await deps.series.firstMinute(snap, streamId) : null, snap.asOfMs, window, bucketSeconds);
      return JSON.stringify(windowSeries(streamId, await deps.onDemand.series(snap, streamId, bucketSeconds), snap.asOfMs, window, bucketSeconds));
    });
  });

  router.get('/telemetry/export', auth, async (ctx) => {
    const caller = callerOf(ctx);
    requireCapability(caller, 'telemetry:read');
    const streamId = streamIdParam(queryOf(ctx));
    if (streamId === undefined) throw problems.streamIdRequired('an export');
    assertStreamAccess(caller, streamId);
    const window = windowParam(queryOf(ctx));
    const format = enumParam(queryOf(ctx), 'format', EXPORT_FORMATS, 'csv');
    const snap = snapshotOf(ctx);
    if (!snap.knows(streamId)) throw problems.streamNotFound();
    const etag = snapshotEtag(snap, `export|${streamId}|${window}|${format}`);
    setSnapshotHeaders(ctx, snap, etag);
    if (etagMatches(ctx.get('If-None-Match') || undefined, etag)) {
      ctx.status = 304;
      return;
    }
    const body = await startExport(deps.db, deps.layout, snap, streamId, window, format);
    ctx.set('Content-Disposition', `attachment; filename="${exportFileName(streamId, window, format)}"`);
    ctx.type = EXPORT_MEDIA[format].type;
    ctx.body = body;
  });
}
