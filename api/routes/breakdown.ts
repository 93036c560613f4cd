// GET /telemetry/breakdown (docs/api.md, "Breakdowns"): the sessions of one of the caller's
// streams, of all its streams (a tenant), or of the platform (an operator), grouped by a session
// dimension, with filters; computed on demand from the served snapshot's session classes
// (served/ondemand-breakdowns.ts) and cached per snapshot with its ETag.
import type { Router, RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import { callerOf } from '../auth.ts';
import { problems } from '../../served/problems.ts';
import { sendSnapshotJsonText } from '../http-cache.ts';
import { parseQuery, queryOf } from '../query.ts';
import { BreakdownQuery } from '../schemas/telemetry.ts';
import { snapshotOf } from '../request-context.ts';
import { guardedOptionalStream, readsTelemetry } from '../telemetry-guard.ts';
import { parseFilters } from '../../served/breakdown-filters.ts';
import type { BreakdownScope } from '../../served/ondemand-breakdowns.ts';
import type { ServedSnapshot } from '../../served/snapshot-store.ts';
import type { ApiDeps } from '../deps.ts';

export function breakdownRoutes(router: Router, deps: ApiDeps, mw: { auth: RouterMiddleware; remember: RouterMiddleware }): void {
  router.get('/telemetry/breakdown', mw.auth, mw.remember, readsTelemetry({ in: 'optional query' }), (ctx) => breakdown(ctx, deps));
}

async function breakdown(ctx: Context, deps: ApiDeps): Promise<void> {
  const streamId = guardedOptionalStream(ctx) ?? null;
  const { by, window } = parseQuery(ctx, BreakdownQuery);
  const { filters, canonical } = parseFilters(queryOf(ctx)['filter']);
  const snap = snapshotOf(ctx);
  const scope = scopeOf(ctx, snap, streamId);
  const key = `breakdown|${scope.customers.join(',')}|${streamId ?? ''}|${window}|${by}|${canonical.join('\0')}`;
  await sendSnapshotJsonText(ctx, snap, key, async () => {
    const rows = await deps.breakdowns.rows(snap, scope, { window, by, filters, canonical }, ctx);
    return JSON.stringify({ asOf: snap.manifest.asOf, window, by, streamId, filters: canonical, rows: rows.map(({ streamId: _s, ...row }) => row) });
  });
}

/**
 * Whose sessions: one stream (404 when it never reported), a tenant's own streams, or for an
 * operator every customer's.
 */
export function scopeOf(ctx: Context, snap: ServedSnapshot, streamId: string | null): BreakdownScope {
  const caller = callerOf(ctx);
  const admittedAs = caller.role === 'tenant' ? caller.customerId : 'operator';
  if (streamId !== null) {
    if (!snap.knows(streamId)) throw problems.streamNotFound();
    return { customers: [streamId.slice(0, streamId.indexOf(':'))], streamId, admittedAs };
  }
  if (caller.role === 'tenant') return { customers: [caller.customerId], streamId: null, admittedAs };
  return { customers: snap.manifest.partitions.map((p) => p.customerId), streamId: null, admittedAs };
}
