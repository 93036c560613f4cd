// The summaries of a snapshot, from its session classes at asOf (snapshot-breakdowns.ts): every
// stream's summaries of every window, one file per customer, then the per-customer and
// platform-wide rows added up from them.
import { LIST, TIMESTAMP, VARCHAR, listValue } from '@duckdb/node-api';
import { copyToParquet } from '../duckdb/index.ts';
import { fillSql, quotedString, sqlFile } from '../duckdb/index.ts';
import { timestampParam, type SqlParams, type SqlTypes } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { pieceSql } from '../figures/index.ts';
import { WINDOW_NAMES } from '../figures/index.ts';
import type { CombinePlan, CustomerFigures } from '../states/index.ts';
import type { SnapshotFiles } from '../snapshots/index.ts';
import { testSummaryGroupRows } from '../../lib/config.ts';

/** Parameters of stream_summaries.sql. */
export function summaryParams(asOf: Date, horizonSeconds: number): { params: SqlParams; types: SqlTypes } {
  return {
    params: {
      as_of: timestampParam(asOf),
      window_names: listValue([...WINDOW_NAMES]),
      horizon_seconds: horizonSeconds,
    },
    types: { as_of: TIMESTAMP, window_names: LIST(VARCHAR) },
  };
}

/**
 * Session-class rows that one statement of window_summaries.sql takes at most, about: its memory
 * grows by ~0.4 KB a row, since it holds the rows it reads (docs/warehouse-state.md, "Memory of a
 * tick"). 30 days × 100 streams at 1,350 sessions a stream is ~136,000 rows over 10 customers.
 */
export const SUMMARY_GROUP_ROWS = 100_000;

/** A stream's session-class rows, in the order of its streamId (session_class_counts.sql). */
export interface StreamRows {
  customer: string;
  streamId: string;
  n: number;
}

/**
 * One statement's share of the summaries: the streams from `first` to `last` (by streamId, as
 * DuckDB orders them) and the customers they belong to. The snapshot's session class files are
 * sorted by stream, so a range of streams reads the row groups that hold them.
 */
export interface SummaryGroup {
  customers: string[];
  first: string;
  last: string;
}

/**
 * The streams, in order, in runs of at most `maxRows` session-class rows (a stream of more alone):
 * a stream's figures need its own rows only, and each stream is in one run.
 */
export function summaryGroups(streams: readonly StreamRows[], maxRows = SUMMARY_GROUP_ROWS): SummaryGroup[] {
  const groups: SummaryGroup[] = [];
  let current: SummaryGroup | null = null;
  let n = 0;
  for (const r of streams) {
    const sameStream = current !== null && current.last === r.streamId;
    if (current === null || (!sameStream && n + r.n > maxRows)) {
      current = { customers: [], first: r.streamId, last: r.streamId };
      groups.push(current);
      n = 0;
    }
    if (!current.customers.includes(r.customer)) current.customers.push(r.customer);
    current.last = r.streamId;
    n += r.n;
  }
  return groups;
}

/** The session classes of a group (window_summaries.sql's <classed>): code constants and quoted ids. */
function groupClassesSql(g: SummaryGroup | null): string {
  if (g === null) return '(SELECT * FROM session_classes WHERE false)';
  const customers = g.customers.map((c) => quotedString(c)).join(', ');
  return `(SELECT * FROM session_classes WHERE customer IN (${customers}) AND streamId BETWEEN ${quotedString(g.first)} AND ${quotedString(g.last)})`;
}

/**
 * Writes the snapshot's summary files from its session classes (the view `session_classes`);
 * returns each customer's figures (series not yet counted) and the platform rows. The summaries
 * are made a run of streams at a time (summaryGroups: a stream's figures need its own rows only), so that
 * the memory of a run grows with the rows of one group, not with the sessions of the snapshot.
 */
export async function writeSummaries(s: DbSession, plan: CombinePlan, maxGroupRows = testSummaryGroupRows() ?? SUMMARY_GROUP_ROWS): Promise<{ customers: Map<string, CustomerFigures>; platformRows: number }> {
  const { params, types } = summaryParams(plan.asOf, plan.horizonSeconds);
  const counts = await s.all<{ customer: string; streamId: string; n: number | bigint }>(sqlFile('session_class_counts'));
  const groups: (SummaryGroup | null)[] = summaryGroups(
    counts.map((r) => ({ ...r, n: Number(r.n) })),
    maxGroupRows,
  );
  if (groups.length === 0) groups.push(null);
  for (const [i, g] of groups.entries()) {
    const into = i === 0 ? 'CREATE OR REPLACE TEMP TABLE summaries AS' : 'INSERT INTO summaries';
    await s.run(pieceSql('window_summaries', { classed: groupClassesSql(g), into }), params, types);
  }
  const customers = await writeCustomerSummaries(s, plan.customers, plan.build);
  const platformRows = await writeAddedUp(s, plan.build);
  return { customers, platformRows };
}

/** Each customer's stream summaries into its file, and what they count. */
async function writeCustomerSummaries(s: DbSession, customers: readonly string[], build: SnapshotFiles): Promise<Map<string, CustomerFigures>> {
  const counts = await s.all<{ customer: string; reports: number; streams: number }>(sqlFile('summary_counts'));
  const out = new Map<string, CustomerFigures>();
  for (const c of customers) {
    const row = counts.find((r) => r.customer === c);
    const summaryRows = await copyToParquet(s, sqlFile('summaries_of_customer'), build.summaries(c), { customer: c });
    out.set(c, {
      reports: row?.reports ?? 0,
      streams: row?.streams ?? 0,
      summaryRows,
      seriesRows: 0,
      seriesDaysLinked: 0,
      seriesDaysWritten: 0,
    });
  }
  return out;
}

/** The platform-wide and per-customer rows into their files; returns the platform rows. */
async function writeAddedUp(s: DbSession, build: SnapshotFiles): Promise<number> {
  await s.run(fillSql(sqlFile('added_up'), { summaries: 'summaries' }), { window_names: listValue([...WINDOW_NAMES]) }, { window_names: LIST(VARCHAR) });
  const platformRows = await copyToParquet(s, sqlFile('platform_rows'), build.platform);
  await copyToParquet(s, sqlFile('customer_rows'), build.customers);
  return platformRows;
}
