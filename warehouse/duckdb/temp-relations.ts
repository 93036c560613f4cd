// The temporary tables and views that a computation of several steps leaves in its DuckDB
// session, dropped by name when it ends.
import type { DbSession } from './session.ts';

/** Drop temporary tables or views by name, whichever each is (a failed step may leave either). */
export async function dropRelations(s: DbSession, names: readonly string[]): Promise<void> {
  for (const name of names) {
    await s.run(`DROP TABLE IF EXISTS ${name}`).catch(() => s.run(`DROP VIEW IF EXISTS ${name}`));
  }
}
