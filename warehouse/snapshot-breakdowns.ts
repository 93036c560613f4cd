// What a snapshot keeps for breakdowns by session dimension (breakdowns.ts): each customer's
// session classes at asOf (every session's part of each window class, with its dimensions: its
// recent days' written by the run, its older days' linked from the state area), from which the
// API answers breakdowns and filtered metrics on demand, and every stream's quality figures of
// every window, which unfiltered metrics serve from memory.
import path from 'node:path';
import { copyToParquet } from './parquet-write.ts';
import { sqlFile } from './sql-files.ts';
import type { DbSession } from './duckdb/session.ts';
import { breakdownFileSql, SESSION_CLASSES_ROW_GROUP, windowClassParams } from './breakdowns.ts';
import type { CombinePlan } from './combine-plan.ts';
import { createSessionClassesView, olderSessionClasses } from './older-classes.ts';
import type { WindowPieces } from './window-pieces.ts';
import { fsyncDir, linkOrCopy } from '../lib/fsx.ts';

/**
 * The session classes of the snapshot at asOf: the table `session_classes_recent` from the window
 * pieces, each customer's older classes (older-classes.ts), and the view `session_classes` of
 * both, which its summaries (snapshot-summaries.ts) are made of. Returns the older files by customer.
 */
export async function createSessionClasses(s: DbSession, plan: CombinePlan, pieces: WindowPieces): Promise<Map<string, string>> {
  const { params, types } = windowClassParams(plan.asOf);
  await s.run(breakdownFileSql('snapshot_session_classes', { pieces: 'window_pieces' }), params, types);
  const older = await olderSessionClasses(s, plan, pieces);
  await createSessionClassesView(s, older.unionSql);
  return older.files;
}

/**
 * Writes each customer's session classes (its recent ones, and a link to its older ones) and the
 * stream quality rows (from the summaries, which writeSummaries made); returns the recent rows.
 */
export async function writeBreakdownFiles(s: DbSession, plan: CombinePlan, older: ReadonlyMap<string, string>): Promise<number> {
  let rows = 0;
  for (const c of plan.customers) {
    rows += await copyToParquet(s, sqlFile('session_classes_of_customer'), plan.build.sessionClasses(c), { customer: c }, undefined, {
      rowGroupSize: SESSION_CLASSES_ROW_GROUP,
    });
    const file = older.get(c);
    if (file) {
      await linkOrCopy(file, plan.build.olderSessionClasses(c));
      await fsyncDir(path.dirname(plan.build.olderSessionClasses(c)));
    }
  }
  await copyToParquet(s, sqlFile('stream_quality'), plan.build.streamQuality);
  return rows;
}
