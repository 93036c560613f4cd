// The session classes of each customer's older days (before the recent days that window-pieces.ts
// reads from their own states), kept in the state area and linked into every snapshot. Within one
// hour of asOf the window class of every whole hour piece of those days stays the same (only the
// 7- and 30-day edges reach them, and an edge moves inside its hour), so a customer's older
// classes are computed once an hour, or when its older states change, rather than at every run.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import { copyToParquet } from './parquet-write.ts';
import { fileList, fillSql, quotedString, sqlFile } from './sql-files.ts';
import type { DbSession } from './duckdb/session.ts';
import { breakdownFileSql, SESSION_CLASSES_ROW_GROUP, windowClassParams } from './breakdowns.ts';
import { HOUR_US, type CombinePlan } from './combine-plan.ts';
import { hourPiecesSql, type WindowPieces } from './window-pieces.ts';
import { olderClassesFile } from './state-store.ts';
import { WINDOWS } from './windows.ts';
import { exists } from '../lib/fsx.ts';

/** Bumped when the file's columns or classing change: a new version names new files. */
const VERSION = 'older-classes-1';

/**
 * What fixes the window class of every whole hour piece before `recentFromUs` at asOf
 * (window_class.sql; hour_pieces.sql leaves out the rest of a cut hour): for each bounded window
 * whose lower edge e lies before, the hour h holding e and where e sits in it. At h's first
 * instant, the hour's first-instant piece is out of the window and its rest in; strictly inside,
 * both are out (the rest is cut: edge pieces serve it); at its last microsecond, both are out and
 * nothing is cut. An edge at or after `recentFromUs` leaves every older piece out.
 */
export function olderClassesSignature(asOfUs: bigint, recentFromUs: bigint): string {
  return WINDOWS.filter((w) => w.seconds !== null)
    .map((w) => {
      const e = asOfUs - BigInt(w.seconds!) * 1_000_000n;
      if (e >= recentFromUs) return 'after';
      const h = e - (((e % HOUR_US) + HOUR_US) % HOUR_US);
      return `${h}:${e === h ? 0 : e < h + HOUR_US - 1n ? 1 : 2}`;
    })
    .join(',');
}

/**
 * Each customer's older session classes file at asOf (written the first time a run needs it,
 * touched on every use so that retention keeps it), and the SQL that adds them to the recent ones
 * in the view `session_classes`.
 */
export async function olderSessionClasses(s: DbSession, plan: CombinePlan, pieces: WindowPieces): Promise<{ files: Map<string, string>; unionSql: string }> {
  const signature = olderClassesSignature(plan.asOfUs, pieces.recentFromUs);
  const { params, types } = windowClassParams(plan.asOf);
  const files = new Map<string, string>();
  for (const [customerId, hourFiles] of pieces.older) {
    const key = createHash('sha256').update([VERSION, signature, ...hourFiles].join('\n')).digest('hex').slice(0, 24);
    const file = olderClassesFile(plan.layout, customerId, key);
    if (!(await exists(file))) {
      const query = breakdownFileSql('older_session_classes', { pieces: `(${hourPiecesSql(plan, hourFiles)})` });
      await copyToParquet(s, query, file, params, types, { rowGroupSize: SESSION_CLASSES_ROW_GROUP });
    }
    const now = new Date();
    await fs.utimes(file, now, now).catch(() => {});
    files.set(customerId, file);
  }
  const unionSql = [...files].map(([c, f]) => `UNION ALL BY NAME SELECT ${quotedString(c)} AS customer, * FROM read_parquet(${fileList([f])}, hive_partitioning = false)`).join('\n');
  return { files, unionSql };
}

/** The view `session_classes`: the recent classes and every customer's older ones. */
export async function createSessionClassesView(s: DbSession, unionSql: string): Promise<void> {
  await s.run(fillSql(sqlFile('session_classes_view'), { older: unionSql }));
}
