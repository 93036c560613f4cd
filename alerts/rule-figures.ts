// The value of every rule at a snapshot, read through the functions that answer the JSON routes
// (design.md, principle 11): a stream's unfiltered figures as GET /telemetry/metrics/:streamId
// serves them (api/stream-figures.ts), anything filtered or tenant-wide as the breakdown route
// computes it (api/ondemand-breakdowns.ts breakdownRows), activePeers from the stream summaries or
// the customer's row. Rules that ask the same question (customer, stream, window, filters) share
// one computation per snapshot.
import type { Db } from '../warehouse/duckdb/db.ts';
import { NO_SESSIONS, type BreakdownFigures } from '../warehouse/breakdowns.ts';
import { parseFilters } from '../api/breakdown-filters.ts';
import { breakdownRows } from '../api/ondemand-breakdowns.ts';
import { streamMetricsBody } from '../api/stream-figures.ts';
import type { ServedSnapshot } from '../api/snapshot-store.ts';
import type { AlertMetric, AlertRule } from './rule-schema.ts';

/** The figures of one question, by metric name (null: the figure has no value there). */
export type Figures = Partial<Record<AlertMetric, number | null>> & { totalSessions: number };

export interface Question {
  customerId: string;
  streamId: string | null;
  window: AlertRule['window'];
  filters: readonly string[];
}

/** What makes two rules' questions the same (filters in their canonical form). */
export function questionKey(customerId: string, rule: AlertRule): { key: string; question: Question } {
  const { canonical } = parseFilters(rule.filters ?? []);
  const question = { customerId, streamId: rule.streamId ?? null, window: rule.window, filters: canonical };
  return { key: [customerId, question.streamId ?? '', rule.window, ...canonical].join('\0'), question };
}

/** The figures of a question at the snapshot, computed once whatever number of rules ask it. */
export async function questionFigures(db: Db, snap: ServedSnapshot, q: Question): Promise<Figures> {
  const active = activePeers(snap, q);
  if (q.streamId !== null && q.filters.length === 0) {
    const body = streamMetricsBody(snap, q.streamId, q.window);
    return { ...figuresOf({ ...NO_SESSIONS, ...body }, snap.hasBreakdowns), activePeers: active };
  }
  if (!snap.hasBreakdowns) return { totalSessions: 0 };
  const { filters } = parseFilters([...q.filters]);
  const [row] = await breakdownRows(db, snap, { customers: [q.customerId], streamId: q.streamId }, { window: q.window, by: null, filters });
  return { ...figuresOf(row ?? NO_SESSIONS, true), activePeers: active };
}

/** The rule metrics of a row of figures; the quality ones only where the snapshot has them. */
function figuresOf(f: BreakdownFigures, quality: boolean): Figures {
  return {
    totalSessions: f.totalSessions,
    totalBytesFallback: f.totalBytesFallback,
    avgOffloadRatio: f.avgOffloadRatio,
    avgBufferHealth: f.avgBufferHealth,
    ...(quality ? { rebufferRatio: f.rebufferRatio, startupTimeP95Ms: f.startupTimeP95Ms, p2pConnectionSuccess: f.p2pConnectionSuccess } : {}),
  };
}

/** activePeers of the stream (its summary), or of the customer's streams together (its row). */
function activePeers(snap: ServedSnapshot, q: Question): number {
  if (q.streamId !== null) return snap.summaries.get(q.window)?.get(q.streamId)?.activePeers ?? 0;
  return snap.customerRows.get(q.window)?.get(q.customerId)?.activePeers ?? 0;
}
