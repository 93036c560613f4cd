// The telemetry routes of docs/api.md: stream list and summaries, stream metrics,
// platform-wide metrics (operators), bucketed series and exports. Every read is scoped to the
// caller's customerId (stream id prefix, api/telemetry-guard.ts); figures come from the loaded
// snapshot.
import type { Router, RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import type { Readable } from 'node:stream';
import { callerOf, canSee } from '../auth.ts';
import { problems } from '../../served/problems.ts';
import { sendSnapshotJson, sendSnapshotJsonText, setSnapshotHeaders, snapshotEtag, notModified } from '../http-cache.ts';
import { parseQuery, queryOf } from '../query.ts';
import { parseFilters } from '../../served/breakdown-filters.ts';
import { scopeOf } from './breakdown.ts';
import { NO_SESSIONS } from '../../warehouse/reads/index.ts';
import { ExportQuery, PlatformMetricsQuery, StreamMetricsQuery, StreamsQuery, TimeseriesQuery } from '../schemas/telemetry.ts';
import { bucketRange, windowQualitySeries, windowSeries } from '../timeseries.ts';
import { previousBounds } from '../previous-period.ts';
import { EXPORT_MEDIA, exportFileName, startExport, type ExportFormat } from '../export/export.ts';
import type { ServedSnapshot } from '../../served/snapshot-store.ts';
import { streamMetricsBody } from '../../served/stream-figures.ts';
import { snapshotOf } from '../request-context.ts';
import { guardedStream, readsTelemetry } from '../telemetry-guard.ts';
import type { ApiDeps } from '../deps.ts';
import { clientGoneSignal } from '../../served/request-signal.ts';
import { QueryTimeout } from '../../warehouse/duckdb/index.ts';
import { isShortWindow, STANDARD_BUCKET_SECONDS, type WindowName } from '../../warehouse/figures/index.ts';

/** What a refused export is told to wait: about the time a typical export takes. */
const EXPORT_RETRY_AFTER_SECONDS = 10;

/**
 * `operators`: the operator router (routes/operator.ts), for the platform-wide metrics. `remember`
 * (api/replayed-answers.ts) marks the routes whose answers depend on nothing but the caller, the URL and
 * the snapshot, so that a repeat with the same token is answered before the routers.
 */
export function telemetryRoutes(router: Router, deps: ApiDeps, mw: { auth: RouterMiddleware; remember: RouterMiddleware }, operators: Router): void {
  const { auth, remember } = mw;
  router.get('/telemetry/streams', auth, remember, readsTelemetry(), (ctx) => streams(ctx, deps));
  operators.get('/telemetry/metrics', remember, platformMetrics);
  router.get('/telemetry/metrics/:streamId', auth, remember, readsTelemetry({ in: 'path' }), (ctx) => streamMetrics(ctx, deps));
  router.get('/telemetry/timeseries', auth, remember, readsTelemetry({ in: 'query', what: 'a series' }), (ctx) => timeseries(ctx, deps));
  router.get('/telemetry/export', auth, readsTelemetry({ in: 'query', what: 'an export' }), (ctx) => exportStream(ctx, deps));
}

async function streams(ctx: Context, deps: ApiDeps): Promise<void> {
  const caller = callerOf(ctx);
  const { window, detail } = parseQuery(ctx, StreamsQuery);
  const { filters, canonical } = parseFilters(queryOf(ctx)['filter']);
  const snap = snapshotOf(ctx);
  const scope = caller.role === 'tenant' ? caller.customerId : '*';
  const listed = () => [...snap.summaries.get(window)!.values()].filter((s) => canSee(caller, s.streamId));
  if (canonical.length === 0) {
    sendSnapshotJson(ctx, snap, `streams|${scope}|${window}|${detail ? 1 : 0}`, () => {
      const list = listed();
      return { window, asOf: snap.manifest.asOf, streams: detail ? list : list.map((s) => s.streamId) };
    });
    return;
  }
  // With filters: the streams with a session the filters keep, each with those sessions' figures
  // (one per-stream breakdown of the caller's sessions, the breakdown's SQL); liveness stays the stream's.
  await sendSnapshotJsonText(ctx, snap, `streams|${scope}|${window}|${detail ? 1 : 0}|${canonical.join('\0')}`, async () => {
    const rows = await deps.breakdowns.rows(snap, scopeOf(ctx, snap, null), { window, by: null, filters, canonical, perStream: true }, ctx);
    const kept = new Map(rows.filter((r) => r.totalSessions > 0).map((r) => [r.streamId, r]));
    const list = listed()
      .filter((s) => kept.has(s.streamId))
      .map((s) => {
        const r = kept.get(s.streamId)!;
        const { totalSessions, totalBytesOffloaded, totalBytesFallback, avgOffloadRatio, avgPeerCount, avgBufferHealth } = r;
        return { ...s, totalSessions, totalBytesOffloaded, totalBytesFallback, avgOffloadRatio, avgPeerCount, avgBufferHealth };
      });
    return JSON.stringify({ window, asOf: snap.manifest.asOf, streams: detail ? list : list.map((s) => s.streamId), filters: canonical });
  });
}

function platformMetrics(ctx: Context): void {
  const { window, groupBy } = parseQuery(ctx, PlatformMetricsQuery);
  const byCustomer = groupBy === 'customer';
  const snap = snapshotOf(ctx);
  sendSnapshotJson(ctx, snap, `platform|${window}|${byCustomer}`, () => ({
    window,
    asOf: snap.manifest.asOf,
    ...snap.platform.get(window)!,
    ...(byCustomer ? { customers: [...snap.customerRows.get(window)!.entries()].map(([customerId, row]) => ({ customerId, ...row })) } : {}),
  }));
}

/**
 * A stream's metrics: unfiltered, its summary and quality rows (in memory); with filters, its one
 * group of kept sessions, computed on demand like a breakdown (the same SQL and definitions).
 */
async function streamMetrics(ctx: Context, deps: ApiDeps): Promise<void> {
  const streamId = guardedStream(ctx);
  const { window, period } = parseQuery(ctx, StreamMetricsQuery);
  const { filters, canonical } = parseFilters(queryOf(ctx)['filter']);
  const snap = knownStreamSnapshot(ctx, streamId);
  if (period === 'previous') {
    previousBounds(snap.asOfMs, window); // 400 for `all`, before any work
    const scope = scopeOf(ctx, snap, streamId);
    await sendSnapshotJsonText(ctx, snap, `metrics-previous|${streamId}|${window}|${canonical.join('\0')}`, async () => {
      const p = await deps.previous.figures(snap, scope, { window, filters, canonical }, ctx);
      const { rebufferEvents, rebufferRatio, startupTimeP95Ms, p2pConnectionSuccess, ...summary } = p.figures;
      const filtered = canonical.length > 0 ? { filters: canonical } : {};
      return JSON.stringify({ streamId, ...summary, window, asOf: snap.manifest.asOf, rebufferEvents, rebufferRatio, startupTimeP95Ms, p2pConnectionSuccess, ...filtered, period, from: p.from, to: p.to, activePeers: p.activePeers });
    });
    return;
  }
  if (canonical.length === 0 && !isShortWindow(window)) {
    sendSnapshotJson(ctx, snap, `metrics|${streamId}|${window}`, () => streamMetricsBody(snap, streamId, window));
    return;
  }
  // Filtered, or a short window (5m, 15m: no part of the snapshot): the stream's one group of kept
  // sessions, computed on demand like a breakdown (the same SQL and definitions).
  const scope = scopeOf(ctx, snap, streamId);
  await sendSnapshotJsonText(ctx, snap, `metrics|${streamId}|${window}|${canonical.join('\0')}`, async () => {
    const [row] = await deps.breakdowns.rows(snap, scope, { window, by: null, filters, canonical }, ctx);
    const { streamId: _s, value: _v, ...figures } = row ?? { streamId: null, value: null, ...NO_SESSIONS };
    const { rebufferEvents, rebufferRatio, startupTimeP95Ms, p2pConnectionSuccess, ...summary } = figures;
    const filtered = canonical.length > 0 ? { filters: canonical } : {};
    return JSON.stringify({ streamId, ...summary, window, asOf: snap.manifest.asOf, rebufferEvents, rebufferRatio, startupTimeP95Ms, p2pConnectionSuccess, ...filtered });
  });
}

async function timeseries(ctx: Context, deps: ApiDeps): Promise<void> {
  const streamId = guardedStream(ctx);
  const { bucketSeconds, window, quality } = parseQuery(ctx, TimeseriesQuery);
  const { filters, canonical } = parseFilters(queryOf(ctx)['filter']);
  const snap = knownStreamSnapshot(ctx, streamId);
  const key = `series|${streamId}|${window}|${bucketSeconds}${quality ? '|quality' : ''}${canonical.map((f) => `\0${f}`).join('')}`;
  const standard = (STANDARD_BUCKET_SECONDS as readonly number[]).includes(bucketSeconds);
  await sendSnapshotJsonText(ctx, snap, key, async () => {
    if (standard && !quality && canonical.length === 0) return deps.series.windowJson(snap, streamId, window, bucketSeconds);
    // Refuse an oversized range before computing anything (the first minute locates `all`).
    const first = window === 'all' ? await deps.series.firstMinute(snap, streamId) : null;
    const { from } = bucketRange(first, snap.asOfMs, window, bucketSeconds);
    // With quality figures or filters, only the window's dates are read; a plain size is computed
    // over all history once and serves every window.
    const range = quality || canonical.length > 0 ? { fromMs: from, filters, canonical } : undefined;
    const body = quality
      ? windowQualitySeries(streamId, await deps.onDemand.qualitySeries(snap, streamId, bucketSeconds, ctx, range), { asOfMs: snap.asOfMs, window, bucketSeconds, firstMs: first })
      : windowSeries(streamId, await deps.onDemand.series(snap, streamId, bucketSeconds, ctx, range), snap.asOfMs, window, bucketSeconds, first);
    return JSON.stringify(canonical.length > 0 ? { ...body, filters: canonical } : body);
  });
}

async function exportStream(ctx: Context, deps: ApiDeps): Promise<void> {
  const streamId = guardedStream(ctx);
  const { window, format } = parseQuery(ctx, ExportQuery);
  const snap = knownStreamSnapshot(ctx, streamId);
  const etag = snapshotEtag(snap, `export|${streamId}|${window}|${format}`);
  setSnapshotHeaders(ctx, snap, etag);
  if (notModified(ctx, etag)) {
    ctx.status = 304;
    return;
  }
  const attachment = () => {
    ctx.set('Content-Disposition', `attachment; filename="${exportFileName(streamId, window, format)}"`);
    ctx.type = EXPORT_MEDIA[format].type;
  };
  if (ctx.method === 'HEAD') {
    // The headers a GET would send, and no export started: nothing to compute, hold or clean up.
    attachment();
    ctx.status = 200;
    return;
  }
  const body = await startAdmittedExport(ctx, deps, snap, { streamId, window, format });
  // A response that closes early (client gone, HEAD-like end by Koa) destroys the body, which
  // releases its files.
  ctx.res.once('close', () => body.destroy());
  attachment();
  ctx.body = body;
}

/**
 * The export's body, once the export is admitted (429 beyond the caller's or the server's limit):
 * its place is held until the body is gone (sent, failed or destroyed).
 */
async function startAdmittedExport(
  ctx: Context,
  deps: ApiDeps,
  snap: ServedSnapshot,
  { streamId, window, format }: { streamId: string; window: WindowName; format: ExportFormat },
): Promise<Readable> {
  const caller = callerOf(ctx);
  const admitted = deps.exports.admit(caller.role === 'tenant' ? caller.customerId : 'operator');
  if (!admitted.ok) {
    const { scope, limit } = admitted.refusal;
    throw problems.tooManyExports(scope === 'tenant' ? 'tenant' : 'server', limit, EXPORT_RETRY_AFTER_SECONDS);
  }
  let body: Readable;
  try {
    body = await startExport(deps.db, deps.layout, snap, streamId, window, format, {
      signal: clientGoneSignal(ctx),
      dayTimeoutMs: deps.config.api.exports.dayTimeoutMs,
      sliceBytes: deps.config.api.exports.sliceBytes,
    });
  } catch (err) {
    admitted.release();
    if (err instanceof QueryTimeout) throw problems.timeout();
    throw err;
  }
  body.once('close', admitted.release);
  return body;
}

/** The snapshot the request reads (503 when none is loaded), which knows the stream (404 otherwise). */
function knownStreamSnapshot(ctx: Context, streamId: string): ServedSnapshot {
  const snap = snapshotOf(ctx);
  if (!snap.knows(streamId)) throw problems.streamNotFound();
  return snap;
}
