// What a snapshot keeps for breakdowns by session dimension (breakdowns.ts): each customer's
// session classes at asOf (every session's part of each window class, with its dimensions), from
// which the API answers breakdowns and filtered metrics on demand, and every stream's quality
// figures of every window, which unfiltered metrics serve from memory.
import { copyToParquet } from './parquet-write.ts';
import { sqlFile } from './sql-files.ts';
import type { DbSession } from './duckdb/session.ts';
import { breakdownFileSql, windowClassParams } from './breakdowns.ts';
import type { CombinePlan } from './combine-plan.ts';

/**
 * Rows per row group of a customer's session classes: a read of one stream skips the others' by
 * their streamId statistics (the file is sorted by stream).
 */
export const SESSION_CLASSES_ROW_GROUP = 16_384;

/**
 * The table `session_classes` of the snapshot, from the window pieces at asOf: what its summaries
 * (snapshot-summaries.ts) and its session class files are made of.
 */
export async function createSessionClasses(s: DbSession, plan: CombinePlan): Promise<void> {
  const { params, types } = windowClassParams(plan.asOf);
  await s.run(breakdownFileSql('snapshot_session_classes', { pieces: 'window_pieces' }), params, types);
}

/**
 * Writes each customer's session classes and the stream quality rows (from the summaries, which
 * writeSummaries made); returns the session class rows.
 */
export async function writeBreakdownFiles(s: DbSession, plan: CombinePlan): Promise<number> {
  let rows = 0;
  for (const c of plan.customers) {
    rows += await copyToParquet(s, sqlFile('session_classes_of_customer'), plan.build.sessionClasses(c), { customer: c }, undefined, {
      rowGroupSize: SESSION_CLASSES_ROW_GROUP,
    });
  }
  await copyToParquet(s, sqlFile('stream_quality'), plan.build.streamQuality);
  return rows;
}
