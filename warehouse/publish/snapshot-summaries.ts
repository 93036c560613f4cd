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
import { testSummaryBases, testSummaryGroupRows } from '../../lib/config.ts';
import { classesUnionSql, createSessionClassesView, customerRowsSql, settledFileList, type UnitClasses } from './class-units.ts';
import { summaryBases } from './summary-bases.ts';

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

/** A stream's rows for its summaries, in the order of its streamId (summary_stream_rows.sql). */
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
  /** Only these streams of the range (summaryStreamGroups), when set. */
  streams?: string[];
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

/** A group's rows of a relation with `customer` and `streamId`: code constants and quoted ids. */
function groupFilterSql(g: SummaryGroup): string {
  const customers = g.customers.map((c) => quotedString(c)).join(', ');
  const streams = g.streams ? `streamId IN (${g.streams.map((id) => quotedString(id)).join(', ')})` : `streamId BETWEEN ${quotedString(g.first)} AND ${quotedString(g.last)}`;
  return `customer IN (${customers}) AND ${streams}`;
}

/** The session classes of a group (window_summaries.sql's <classed>). */
function groupClassesSql(g: SummaryGroup | null): string {
  return g === null ? '(SELECT * FROM session_classes WHERE false)' : `(SELECT * FROM session_classes WHERE ${groupFilterSql(g)})`;
}

/** Runs of the given streams (summaryGroups), each naming its streams: other streams lie between them. */
function summaryStreamGroups(streams: readonly StreamRows[], maxRows: number): SummaryGroup[] {
  return summaryGroups(streams, maxRows).map((g) => ({
    ...g,
    streams: [...new Set(streams.filter((r) => r.streamId >= g.first && r.streamId <= g.last).map((r) => r.streamId))],
  }));
}

/** How a snapshot's summaries were made: bases made, and streams from a base or from all of their classes. */
export interface SummaryCounts {
  basesComputed: number;
  streamsFromBase: number;
  streamsRecomputed: number;
}

/**
 * Writes the snapshot's summary files from its session classes (the view `session_classes`);
 * returns each customer's figures (series not yet counted) and the platform rows. The summaries
 * are made a run of streams at a time (summaryGroups: a stream's figures need its own rows only), so that
 * the memory of a run grows with the rows of one group, not with the sessions of the snapshot.
 * A customer with settled classes (`units.settled`) has its streams' summaries made from the
 * summary base of those (summary-bases.ts) and its other classes, so that a tick groups the
 * sessions it touches, not every session of the history; a stream whose startup percentile the
 * base's band cannot give is made from all of its classes, as the others are.
 */
export async function writeSummaries(
  s: DbSession,
  plan: CombinePlan,
  units: Pick<UnitClasses, 'files' | 'settled'>,
  maxGroupRows = testSummaryGroupRows() ?? SUMMARY_GROUP_ROWS,
): Promise<{ customers: Map<string, CustomerFigures>; platformRows: number; summaries: SummaryCounts; used: string[] }> {
  const { params, types } = summaryParams(plan.asOf, plan.horizonSeconds);
  const mode = testSummaryBases();
  const bases = await summaryBases(s, plan, mode.off ? new Map() : units.settled, mode.off ? undefined : mode.band);
  // The classes the bases do not hold: all of a customer's without one.
  const fresh = new Map(
    [...units.files].map(([c, list]) => {
      const inBase = bases.files.has(c) ? new Set(settledFileList(units.settled.get(c)!)) : new Set<string>();
      return [c, list.filter((f) => !inBase.has(f))] as const;
    }),
  );
  await createSessionClassesView(s, classesUnionSql(fresh), 'session_classes_fresh');
  const union = (files: [string, readonly string[]][]) => customerRowsSql(new Map(files)).join('\nUNION ALL BY NAME\n');
  if (bases.files.size > 0) {
    await s.run(`CREATE OR REPLACE TEMP VIEW summary_bases AS ${union([...bases.files].map(([c, f]) => [c, [f]]))}`);
    await s.run(`CREATE OR REPLACE TEMP VIEW session_classes_settled AS ${union([...bases.files.keys()].map((c) => [c, settledFileList(units.settled.get(c)!)]))}`);
  }
  const counts = await s.all<{ customer: string; streamId: string; n: number | bigint }>(
    fillSql(sqlFile('summary_stream_rows'), { bases: bases.files.size === 0 ? '' : 'UNION ALL SELECT customer, streamId, count(*) FROM summary_bases GROUP BY ALL' }),
  );
  const streams = counts.map((r) => ({ ...r, n: Number(r.n) }));
  const fromBase = streams.filter((r) => bases.files.has(r.customer));
  const plain = streams.filter((r) => !bases.files.has(r.customer));
  let created = false;
  const into = () => {
    const sql = created ? 'INSERT INTO summaries BY NAME' : 'CREATE OR REPLACE TEMP TABLE summaries AS';
    created = true;
    return sql;
  };
  let recomputed: StreamRows[] = [];
  if (fromBase.length > 0) {
    for (const [i, g] of summaryGroups(fromBase, maxGroupRows).entries()) {
      const incInto = i === 0 ? 'CREATE OR REPLACE TEMP TABLE summaries_inc AS' : 'INSERT INTO summaries_inc';
      const filter = groupFilterSql(g);
      const rows = (view: string) => `(SELECT * FROM ${view} WHERE ${filter})`;
      const sql = pieceSql('window_summaries_incremental', { into: incInto, fresh: rows('session_classes_fresh'), settled: rows('session_classes_settled'), base: rows('summary_bases') });
      await s.run(sql, params, types);
    }
    await s.run(`${into()} SELECT * EXCLUDE (valid) FROM summaries_inc WHERE valid`);
    const invalid = await s.all<{ customer: string; streamId: string }>('SELECT DISTINCT customer, streamId FROM summaries_inc WHERE NOT valid ORDER BY streamId, customer');
    const keys = new Set(invalid.map((r) => `${r.customer}\n${r.streamId}`));
    recomputed = fromBase.filter((r) => keys.has(`${r.customer}\n${r.streamId}`));
    await s.run('DROP TABLE IF EXISTS summaries_inc');
  }
  const whole: (SummaryGroup | null)[] = [...summaryGroups(plain, maxGroupRows), ...summaryStreamGroups(recomputed, maxGroupRows)];
  if (!created && whole.length === 0) whole.push(null);
  for (const g of whole) await s.run(pieceSql('window_summaries', { classed: groupClassesSql(g), into: into() }), params, types);
  const customers = await writeCustomerSummaries(s, plan.customers, plan.build);
  const platformRows = await writeAddedUp(s, plan.build);
  const summaries = { basesComputed: bases.computed, streamsFromBase: fromBase.length - recomputed.length, streamsRecomputed: recomputed.length };
  return { customers, platformRows, summaries, used: bases.used };
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
