// What a snapshot keeps for breakdowns by session dimension (breakdowns.ts): each customer's
// session classes at asOf (every session's part of each window class, with its dimensions), from
// which the API answers breakdowns and filtered metrics on demand, and every stream's quality
// figures of every window, which unfiltered metrics serve from memory.
import { copyToParquet } from './parquet-write.ts';
import { sqlFile } from './sql-files.ts';
import type { DbSession } from './duckdb/session.ts';
import { breakdownFileSql, breakdownParams, NO_FILTERS, windowClassParams } from './breakdowns.ts';
import { WINDOW_NAMES } from './windows.ts';
import type { CombinePlan } from './combine-plan.ts';

/**
 * Rows per row group of a customer's session classes: a read of one stream skips the others' by
 * their streamId statistics (the file is sorted by stream).
 */
export const SESSION_CLASSES_ROW_GROUP = 16_384;

/** Writes each customer's session classes and the stream quality rows; returns the session class rows. */
export async function writeBreakdownFiles(s: DbSession, plan: CombinePlan): Promise<number> {
  const { params, types } = windowClassParams(plan.asOf);
  await s.run(breakdownFileSql('snapshot_session_classes', { pieces: 'window_pieces' }), params, types);
  let rows = 0;
  for (const c of plan.customers) {
    rows += await copyToParquet(s, sqlFile('session_classes_of_customer'), plan.build.sessionClasses(c), { customer: c }, undefined, {
      rowGroupSize: SESSION_CLASSES_ROW_GROUP,
    });
  }
  await writeStreamQuality(s, plan);
  return rows;
}

async function writeStreamQuality(s: DbSession, plan: CombinePlan): Promise<void> {
  for (const [i, window] of WINDOW_NAMES.entries()) {
    const { params, types } = breakdownParams({ window, streamId: null, by: null, filters: NO_FILTERS, perStream: true });
    const into = i === 0 ? 'CREATE OR REPLACE TEMP TABLE stream_quality AS' : 'INSERT INTO stream_quality';
    await s.run(breakdownFileSql('stream_quality', { into, classes: 'session_classes' }), { ...params, window_name: window }, types);
  }
  await copyToParquet(s, 'SELECT * FROM stream_quality ORDER BY windowName, streamId', plan.build.streamQuality);
}
