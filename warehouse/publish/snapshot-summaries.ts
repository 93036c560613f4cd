// The summaries of a snapshot, from its session classes at asOf (snapshot-breakdowns.ts): every
// stream's summaries of every window, one file per customer, then the per-customer and
// platform-wide rows added up from them.
import { LIST, TIMESTAMP, VARCHAR, listValue } from '@duckdb/node-api';
import { copyToParquet } from '../duckdb/index.ts';
import { fillSql, sqlFile } from '../duckdb/index.ts';
import { timestampParam, type SqlParams, type SqlTypes } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { pieceSql } from '../figures/index.ts';
import { WINDOW_NAMES } from '../figures/index.ts';
import type { CombinePlan, CustomerFigures } from '../states/index.ts';
import type { SnapshotFiles } from '../snapshots/index.ts';

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
 * Writes the snapshot's summary files from its session classes (the table `session_classes`);
 * returns each customer's figures (series not yet counted) and the platform rows.
 */
export async function writeSummaries(s: DbSession, plan: CombinePlan): Promise<{ customers: Map<string, CustomerFigures>; platformRows: number }> {
  const { params, types } = summaryParams(plan.asOf, plan.horizonSeconds);
  await s.run(pieceSql('window_summaries', { classed: 'session_classes' }), params, types);
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
