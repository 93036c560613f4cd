// What a snapshot keeps for breakdowns by session dimension (breakdowns.ts): each customer's
// session classes at asOf (every session's part of each window class, with its dimensions: those
// of the hours an edge cuts written by the run, the others linked from the state area), from
// which the API answers breakdowns and filtered metrics on demand, and every stream's quality
// figures of every window, which unfiltered metrics serve from memory.
import path from 'node:path';
import { copyToParquet } from '../duckdb/index.ts';
import { sqlFile } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { breakdownFileSql, SESSION_CLASSES_ROW_GROUP, windowClassParams } from '../reads/index.ts';
import { settledBeforeUs, type CombinePlan } from '../states/index.ts';
import { createSessionClassesView, unitSessionClasses, type UnitClasses } from './class-units.ts';
import type { WindowPieces } from '../states/index.ts';
import { fsyncDir, linkOrCopy } from '../../lib/fsx.ts';

/**
 * The session classes of the snapshot at asOf: the table `session_classes_cut` of the hours an
 * edge cuts (from the window pieces), every class unit's file (class-units.ts), and the view
 * `session_classes` of both, which its summaries (snapshot-summaries.ts) are made of.
 */
export async function createSessionClasses(s: DbSession, plan: CombinePlan, pieces: WindowPieces): Promise<UnitClasses> {
  const { params, types } = windowClassParams(plan.asOf);
  await s.run(breakdownFileSql('snapshot_session_classes', { pieces: 'window_pieces' }), params, types);
  // The units before the hour before asOf's (settledBeforeUs) are read through one file per customer.
  const units = await unitSessionClasses(s, plan, pieces.units, settledBeforeUs(plan));
  await createSessionClassesView(s, units.unionSql);
  return units;
}

/**
 * Writes each customer's session classes: those of its cut hours (part-0) and links to its units'
 * (part-1 on), and the stream quality rows (from the summaries, which writeSummaries made);
 * returns the rows of the cut hours' classes.
 */
export async function writeBreakdownFiles(s: DbSession, plan: CombinePlan, units: ReadonlyMap<string, readonly string[]>): Promise<number> {
  let rows = 0;
  for (const c of plan.customers) {
    rows += await copyToParquet(s, sqlFile('session_classes_of_customer'), plan.build.sessionClassesPart(c, 0), { customer: c }, undefined, {
      rowGroupSize: SESSION_CLASSES_ROW_GROUP,
    });
    const files = units.get(c) ?? [];
    for (const [i, file] of files.entries()) await linkOrCopy(file, plan.build.sessionClassesPart(c, i + 1));
    if (files.length > 0) await fsyncDir(path.dirname(plan.build.sessionClassesPart(c, 0)));
  }
  await copyToParquet(s, sqlFile('stream_quality'), plan.build.streamQuality);
  return rows;
}
