// The figures of the previous period (`period=previous` on the summary and stream metrics routes):
// the period of the window's length that ends where the window starts, (asOf − 2·window,
// asOf − window], computed on demand from the raw files of the dates it meets with the breakdown
// SQL at that end (the session classes of the reports as of asOf − window, window class of the
// same name): the same definitions, to the last digit, as the window's own figures. The streams
// with a report in the period and the sessions active at its end (period_activity.sql: the stream
// summaries' definition, with the snapshot's horizon) come with them. Admitted and cancelled like
// the other on-demand work; answers are cached by the response cache per snapshot.
import { BIGINT, TIMESTAMP } from '@duckdb/node-api';
import type { Context } from 'koa';
import type { Db } from '../warehouse/duckdb/index.ts';
import type { DbSession } from '../warehouse/duckdb/index.ts';
import { timestampParam } from '../warehouse/duckdb/index.ts';
import { breakdownFileSql, NO_SESSIONS, queryBreakdown, shortClassParams, shortWindowClass, windowClassParams, type BreakdownFigures, type BreakdownFilters } from '../warehouse/reads/index.ts';
import { pieceSql } from '../warehouse/figures/index.ts';
import { sqlFile } from '../warehouse/duckdb/index.ts';
import { inputsWithin, loadStreamReports } from '../warehouse/reads/index.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { isShortWindow, servedWindowSeconds, type ServedWindow } from '../warehouse/figures/index.ts';
import { problems } from '../served/problems.ts';
import { AdmittedWork } from '../served/shared-work.ts';
import type { BreakdownScope } from '../served/ondemand-breakdowns.ts';
import type { ServedSnapshot } from '../served/snapshot-store.ts';

export interface PreviousPeriod {
  /** The period's bounds: ts in (from, to]. */
  from: string;
  to: string;
  streams: number;
  activePeers: number;
  figures: BreakdownFigures;
}

/** The period before a window: its end (the window's start) and its start, in ms; 400 for `all`. */
export function previousBounds(asOfMs: number, window: ServedWindow): { fromMs: number; toMs: number; seconds: number } {
  const seconds = servedWindowSeconds(window);
  if (seconds === null) throw problems.invalidQuery('no_previous_period', 'The window `all` has no previous period.', { parameter: 'period' });
  return { fromMs: asOfMs - 2 * seconds * 1000, toMs: asOfMs - seconds * 1000, seconds };
}

export class PreviousPeriods {
  private readonly work: AdmittedWork<PreviousPeriod>;

  constructor(
    private readonly db: Db,
    private readonly layout: WarehouseLayout,
    timeoutMs: number,
    limits: { max: number; perTenant: number } = { max: 8, perTenant: 2 },
  ) {
    this.work = new AdmittedWork('previous periods', timeoutMs, limits);
  }

  /** Computations under way (for tests). */
  get inProgress(): number {
    return this.work.inProgress;
  }

  async figures(snap: ServedSnapshot, scope: BreakdownScope, q: { window: ServedWindow; filters: BreakdownFilters; canonical: readonly string[] }, ctx: Context): Promise<PreviousPeriod> {
    const bounds = previousBounds(snap.asOfMs, q.window);
    const key = [snap.id, scope.customers.join(','), scope.streamId ?? '', q.window, ...q.canonical].join('\0');
    return this.work.run(ctx, key, scope.admittedAs, (signal) =>
      this.db.withSession((s) => this.compute(s, snap, scope, { ...q, ...bounds }), { signal, bounded: true, releaseAfter: true }),
    );
  }

  private async compute(
    s: DbSession,
    snap: ServedSnapshot,
    scope: BreakdownScope,
    q: { window: ServedWindow; filters: BreakdownFilters; fromMs: number; toMs: number; seconds: number },
  ): Promise<PreviousPeriod> {
    const end = new Date(q.toMs);
    const relations: string[] = [];
    let streams = 0;
    let activePeers = 0;
    for (const [i, customerId] of scope.customers.entries()) {
      const inputs = snap.customerInputs(this.layout, customerId);
      if (!inputs) continue;
      await loadStreamReports(s, inputsWithin(inputs, q.fromMs, q.toMs), scope.streamId, end);
      // A short window's period is classed by the short windows (short-windows.ts), the others by the snapshot's.
      const { params, types } = isShortWindow(q.window) ? shortClassParams(end) : windowClassParams(end);
      await s.run(breakdownFileSql('report_session_classes', { pieces: `(${pieceSql('report_pieces', { source: 'reports' })})` }), params, types);
      // Each customer's classes apart: queryBreakdown makes each one's parts alone.
      await s.run(`ALTER TABLE report_session_classes RENAME TO previous_classes_${i}`);
      relations.push(`previous_classes_${i}`);
      const [a] = await s.all<{ streams: number; activePeers: number }>(
        sqlFile('period_activity'),
        { as_of: timestampParam(end), period_seconds: q.seconds, horizon_seconds: snap.manifest.settings.activityHorizonSeconds },
        { as_of: TIMESTAMP, period_seconds: BIGINT, horizon_seconds: BIGINT },
      );
      streams += Number(a?.streams ?? 0);
      activePeers += Number(a?.activePeers ?? 0);
    }
    const [row] = relations.length === 0 ? [] : await queryBreakdown(s, relations, { window: q.window, ...(isShortWindow(q.window) ? { maxClass: shortWindowClass(q.window) } : {}), streamId: scope.streamId, by: null, filters: q.filters });
    const { streamId: _s, value: _v, ...figures } = row ?? { streamId: null, value: null, ...NO_SESSIONS };
    return { from: new Date(q.fromMs).toISOString(), to: end.toISOString(), streams, activePeers, figures };
  }
}
