// The value of every rule at a snapshot, read through the functions that answer the JSON routes
// (docs/architecture.md, principle 11): a stream's unfiltered figures as GET /telemetry/metrics/:streamId
// serves them (served/stream-figures.ts), anything filtered or tenant-wide as the breakdown route
// computes it (the breakdown SQL, batched: served/ondemand-breakdowns.ts breakdownBatch; the short
// windows 5m and 15m always so, over the recent reports of the customers asked), activePeers
// from the stream summaries or the customer's row. Rules that ask the same question (customer,
// stream, window, filters) share one computation per snapshot, and every question not answered
// from memory is part of one statement per group of customers.
import type { Db } from '../warehouse/duckdb/index.ts';
import { isShortWindow } from '../warehouse/figures/index.ts';
import { NO_SESSIONS, type BatchFigures } from '../warehouse/reads/index.ts';
import { parseFilters } from '../served/breakdown-filters.ts';
import { breakdownBatch } from '../served/ondemand-breakdowns.ts';
import { streamMetricsBody } from '../served/stream-figures.ts';
import type { ServedSnapshot } from '../served/snapshot-store.ts';
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

/**
 * The figures of every question at the snapshot, each computed once whatever number of rules ask
 * it: a stream's unfiltered ones from the snapshot's memory (no query), every other one by one
 * batched breakdown statement per group of `customersPerQuery` customers (every window at once).
 * When the batch fails, `failed` is told and its questions are left out.
 */
export async function questionsFigures(db: Db, snap: ServedSnapshot, questions: ReadonlyMap<string, Question>, customersPerQuery: number, failed: (err: Error) => void): Promise<Map<string, Figures>> {
  const out = new Map<string, Figures>();
  const batched: [string, Question][] = [];
  for (const [key, q] of questions) {
    if (q.streamId !== null && q.filters.length === 0 && !isShortWindow(q.window)) {
      out.set(key, { ...figuresOf({ ...NO_SESSIONS, ...streamMetricsBody(snap, q.streamId, q.window) }, snap.hasBreakdowns), activePeers: activePeers(snap, q) });
    } else if (!snap.hasBreakdowns) out.set(key, { totalSessions: 0 });
    else batched.push([key, q]);
  }
  if (batched.length === 0) return out;
  const batch = batched.map(([, q]) => ({ customerId: q.customerId, streamId: q.streamId, window: q.window, filters: parseFilters([...q.filters]).filters }));
  try {
    const rows = await breakdownBatch(db, snap, batch, customersPerQuery);
    for (const [i, [key, q]] of batched.entries()) out.set(key, { ...figuresOf(rows[i]!, true), activePeers: activePeers(snap, q) });
  } catch (err) {
    failed(err as Error);
  }
  return out;
}

/** The rule metrics of a row of figures; the quality ones only where the snapshot has them. */
function figuresOf(f: BatchFigures, quality: boolean): Figures {
  return {
    totalSessions: f.totalSessions,
    totalBytesFallback: f.totalBytesFallback,
    avgOffloadRatio: f.avgOffloadRatio,
    avgBufferHealth: f.avgBufferHealth,
    ...(quality ? { rebufferRatio: f.rebufferRatio, startupTimeP95Ms: f.startupTimeP95Ms, p2pConnectionSuccess: f.p2pConnectionSuccess } : {}),
  };
}

/**
 * activePeers of the stream (its summary), or of the customer's streams together (its row). It does
 * not depend on the window (docs/metrics.md); a short window, in no snapshot, takes the `all` rows.
 */
function activePeers(snap: ServedSnapshot, q: Question): number {
  const window = isShortWindow(q.window) ? 'all' : q.window;
  if (q.streamId !== null) return snap.summaries.get(window)?.get(q.streamId)?.activePeers ?? 0;
  return snap.customerRows.get(window)?.get(q.customerId)?.activePeers ?? 0;
}
