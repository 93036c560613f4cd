// The minute pieces of a batch build are keyed by a hash of (stream, session) when the hour pieces
// show it distinct for every session (session_keys_exact.sql), else by the session id: both keys
// must give the same series, row for row, at every standard size.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { generateReports } from '../../warehouse/sample/index.ts';
import { discoverLanding, loadSql } from '../../warehouse/landing/index.ts';
import { fileList, sqlFile, type DbSession } from '../../warehouse/duckdb/index.ts';
import { pieceSql } from '../../warehouse/figures/index.ts';
import { STATE_COLUMNS } from '../../warehouse/session-reports/index.ts';
import { buildSeries, HASHED_SESSION } from '../../warehouse/states/partition-state.ts';

let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse();
  await generateReports(wh.db, wh.layout, { customers: ['acme', 'globex'], streams: 3, sessions: 40, start: new Date('2026-11-01T22:00:00Z'), hours: 4, seed: 7 });
}, 60_000);

afterAll(async () => {
  await wh?.close();
});

/** The batch's series (state_series) with the minute pieces keyed by `minuteSession`. */
async function seriesWith(s: DbSession, minuteSession: string): Promise<Record<string, unknown>[]> {
  await s.run(pieceSql('state_minutes', { minute_session: minuteSession }));
  await buildSeries(s);
  const rows = await s.all<Record<string, unknown>>('SELECT * FROM state_series ORDER BY ALL');
  await s.run('DROP TABLE state_series');
  return rows;
}

describe('minute pieces keyed by a hash of (stream, session)', () => {
  it('is used only when exact, and gives the same series as the session ids', async () => {
    const { files } = await discoverLanding(wh.layout);
    expect(files.length).toBeGreaterThan(0);
    await wh.db.withSession(async (s) => {
      const described = await s.all<{ column_name: string }>(`DESCRIBE SELECT * FROM read_parquet(${fileList(files.map((f) => f.path))}, union_by_name = true)`);
      await s.run(loadSql(files, new Set(described.map((r) => r.column_name)), STATE_COLUMNS, 'VIEW'));
      await s.run(sqlFile('dedup_batch'));
      // Session ids cut to two characters: many ids shared by several streams.
      await s.run('CREATE TEMP TABLE reports_kept AS SELECT * FROM reports');
      await s.run('CREATE OR REPLACE TEMP VIEW reports AS SELECT * REPLACE (left(sessionId, 2) AS sessionId) FROM reports_kept');
      await s.run(pieceSql('state_pieces'));
      const [check] = await s.all<{ exact: boolean }>(sqlFile('session_keys_exact'));
      expect(check!.exact).toBe(true);
      // A session id shared by streams is still two sessions under the hash.
      const [shared] = await s.all<{ n: number }>(
        `SELECT count(*) AS n FROM (SELECT sessionId FROM state_hours GROUP BY sessionId HAVING count(DISTINCT streamId) > 1)`,
      );
      expect(Number(shared!.n)).toBeGreaterThan(0);

      const bySessionId = await seriesWith(s, 'sessionId');
      await s.run(pieceSql('state_minutes', { minute_session: HASHED_SESSION }));
      const [keys] = await s.all<{ t: string; pairs: number; keys: number }>(
        `SELECT any_value(typeof(sessionId)) AS t, (SELECT count(*) FROM (SELECT DISTINCT streamId, sessionId FROM state_hours)) AS pairs,
                count(DISTINCT sessionId) AS keys FROM state_minutes`,
      );
      expect(keys!.t).toBe('UBIGINT');
      expect(Number(keys!.keys)).toBe(Number(keys!.pairs));
      const byHash = await seriesWith(s, HASHED_SESSION);
      expect(bySessionId.length).toBeGreaterThan(100);
      expect(new Set(bySessionId.map((r) => r['bucketSeconds'])).size).toBeGreaterThan(3);
      expect(byHash).toEqual(bySessionId);
      await s.run('DROP TABLE state_hours');
      await s.run('DROP VIEW reports');
      await s.run('DROP TABLE reports_kept');
    });
  });
});
