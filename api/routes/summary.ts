// GET /telemetry/summary (docs/api.md, "Summary"): the headline figures of every stream of a
// customer together (a tenant: its own; an operator: one customer, or the platform), with filters:
// the one group of the breakdown SQL without a dimension, so that a portal page's or a report's
// tenant-wide figures are exact (distinct sessions, percentiles), never added up from streams.
// With `period=previous`, the same figures of the period before the window (api/previous-period.ts).
import type { Router, RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import { callerOf } from '../auth.ts';
import { problems } from '../../served/problems.ts';
import { sendSnapshotJsonText } from '../http-cache.ts';
import { parseQuery, queryOf } from '../query.ts';
import { SummaryQuery } from '../schemas/telemetry.ts';
import { snapshotOf } from '../request-context.ts';
import { readsTelemetry } from '../telemetry-guard.ts';
import { parseFilters } from '../../served/breakdown-filters.ts';
import { NO_SESSIONS } from '../../warehouse/reads/index.ts';
import { streamBelongsTo } from '../../warehouse/ids.ts';
import type { BreakdownScope } from '../../served/ondemand-breakdowns.ts';
import { previousBounds } from '../previous-period.ts';
import type { ServedSnapshot } from '../../served/snapshot-store.ts';
import type { ApiDeps } from '../deps.ts';
import type { WindowName } from '../../warehouse/figures/index.ts';

export function summaryRoutes(router: Router, deps: ApiDeps, mw: { auth: RouterMiddleware; remember: RouterMiddleware }): void {
  router.get('/telemetry/summary', mw.auth, mw.remember, readsTelemetry(), (ctx) => summary(ctx, deps));
}

async function summary(ctx: Context, deps: ApiDeps): Promise<void> {
  const { window, customerId, period } = parseQuery(ctx, SummaryQuery);
  const { filters, canonical } = parseFilters(queryOf(ctx)['filter']);
  const snap = snapshotOf(ctx);
  const scope = summaryScope(ctx, snap, customerId ?? null);
  if (period === 'previous') {
    previousBounds(snap.asOfMs, window); // 400 for `all`, before any work
    const key = `summary-previous|${scope.customers.join(',')}|${customerId ?? '*'}|${window}|${canonical.join('\0')}`;
    await sendSnapshotJsonText(ctx, snap, key, async () => {
      const p = await deps.previous.figures(snap, scope, { window, filters, canonical }, ctx);
      const scoped = customerId ?? (callerOf(ctx).role === 'tenant' ? scope.customers[0]! : null);
      return JSON.stringify({ asOf: snap.manifest.asOf, window, period, from: p.from, to: p.to, customerId: scoped, filters: canonical, streams: p.streams, activePeers: p.activePeers, ...p.figures });
    });
    return;
  }
  const key = `summary|${scope.customers.join(',')}|${customerId ?? '*'}|${window}|${canonical.join('\0')}`;
  await sendSnapshotJsonText(ctx, snap, key, async () => {
    const [row] = scope.customers.length === 0 ? [] : await deps.breakdowns.rows(snap, scope, { window, by: null, filters, canonical }, ctx);
    const { streamId: _s, value: _v, ...figures } = row ?? { streamId: null, value: null, ...NO_SESSIONS };
    const scoped = customerId ?? (callerOf(ctx).role === 'tenant' ? scope.customers[0]! : null);
    return JSON.stringify({ asOf: snap.manifest.asOf, window, customerId: scoped, filters: canonical, ...liveness(snap, window, scoped), ...figures });
  });
}

/**
 * Whose sessions: a tenant's own customer (naming another is 403, like a foreign stream); for an
 * operator the customer named (404 when the snapshot has none of its data) or every customer.
 */
function summaryScope(ctx: Context, snap: ServedSnapshot, customerId: string | null): BreakdownScope {
  const caller = callerOf(ctx);
  if (caller.role === 'tenant') {
    if (customerId !== null && customerId !== caller.customerId) throw problems.forbiddenTenant();
    return { customers: snap.hasCustomer(caller.customerId) ? [caller.customerId] : [], streamId: null, admittedAs: caller.customerId };
  }
  if (customerId === null) return { customers: snap.manifest.partitions.map((p) => p.customerId), streamId: null, admittedAs: 'operator' };
  if (!snap.hasCustomer(customerId)) throw problems.customerNotFound();
  return { customers: [customerId], streamId: null, admittedAs: 'operator' };
}

/** Streams with a report in the window and their active peers (not filtered: a stream's own figures). */
function liveness(snap: ServedSnapshot, window: WindowName, customerId: string | null): { streams: number; activePeers: number } {
  let streams = 0;
  let activePeers = 0;
  for (const s of snap.summaries.get(window)!.values()) {
    if (customerId !== null && !streamBelongsTo(s.streamId, customerId)) continue;
    streams++;
    activePeers += s.activePeers;
  }
  return { streams, activePeers };
}
