// A summary base one step on (summary_base_step.sql, summary-bases.ts chainedBases): the base of
// some session classes with more classes added. Over hand-made class rows of three streams
// (sessions with rows of several classes, some split between the base's classes and the added
// ones, few distinct startup times so that the band holds repeated values, sessions without a
// peer count or a startup time, final reports), a base stepped once and twice equals, row for
// row, what plain SQL over all of the classes gives: the parts per stream and class, each
// window's session counts and exact peer-mean sum, its band (every startup time at or above the
// first base's lower end, repeats kept, the largest first) and the late sessions.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIST, TIMESTAMP, VARCHAR, listValue } from '@duckdb/node-api';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { pieceSql, WINDOW_NAMES } from '../../warehouse/figures/index.ts';
import { fileList, quotedString, timestampParam } from '../../warehouse/duckdb/index.ts';

let wh: TestWarehouse;
const LATE_FROM = new Date('2026-11-10T10:20:00Z');
const file = (name: string) => path.join(wh.root, `${name}.parquet`);
const rowsOf = (names: string[]) => `read_parquet(${fileList(names.map(file))}, hive_partitioning = false)`;
const params = { window_names: listValue([...WINDOW_NAMES]), late_from: timestampParam(LATE_FROM) };
const types = { window_names: LIST(VARCHAR), late_from: TIMESTAMP };

/** Rows of one kind of a base file, in a fixed order, the columns that kind has. */
async function kindRows(name: string, kind: string): Promise<Record<string, unknown>[]> {
  const columns: Record<string, string> = {
    part: 'streamId, class, reports, off, fb, buf_sum, buf_n, stalls, last_ts, stall_ms, watch_ms, p2p_att, p2p_ok',
    window: 'windowName, streamId, sessions, peer_mean_sum, peer_sessions, startup_n, band_min, band',
    late: 'streamId, sessionId, last_ts, last_final_ts',
  };
  return wh.db.withSession((s) => s.all(`SELECT ${columns[kind]} FROM read_parquet(${quotedString(file(name))}) WHERE kind = '${kind}' ORDER BY ALL`));
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  await wh.db.withSession(async (s) => {
    // Session k of stream k % 3 has rows of the classes c (1..5) with (k + c) % 3 <> 0; its startup
    // time (one of 7 values, or none) on its row of its first class; the rows of three groups:
    // the first base's (`settled`), then two steps' (`fresh1`, `fresh2`), a session's rows often
    // in more than one of them.
    await s.run(`
      CREATE TEMP TABLE cls AS
      SELECT
        'acme:s' || (k % 3) AS streamId, 'x' || k AS sessionId, CAST(c AS BIGINT) AS class,
        CAST(1 + (k * 7 + c) % 5 AS BIGINT) AS reports,
        CAST((k * 13 + c) % 1000 AS BIGINT) AS off, CAST((k * 17 + c) % 700 AS BIGINT) AS fb,
        CAST(((k * 11 + c) % 100) / 7 AS DECIMAL(38, 9)) AS buf_sum, CAST(1 + c % 2 AS BIGINT) AS buf_n,
        CAST((k + c) % 2 AS BIGINT) AS stalls,
        TIMESTAMP '2026-11-10 10:00:00' + to_seconds(k * 3 + c * 60) AS last_ts,
        CASE WHEN k % 4 = 0 AND c = 5 THEN TIMESTAMP '2026-11-10 10:00:00' + to_seconds(k * 3 + c * 60) END AS last_final_ts,
        CAST((k * 3 + c) % 50 AS BIGINT) AS stall_ms, CAST(1000 + (k * 5 + c) % 300 AS BIGINT) AS watch_ms,
        CAST((k + c) % 4 AS BIGINT) AS p2p_att, CAST((k + c) % 3 AS BIGINT) AS p2p_ok,
        CAST(CASE WHEN k % 6 <> 0 THEN (k * 3 + c) % 9 END AS BIGINT) AS peer_sum,
        CAST(CASE WHEN k % 6 = 0 THEN 0 ELSE 1 + c % 2 END AS BIGINT) AS peer_n,
        CASE WHEN c = (CASE WHEN (k + 1) % 3 <> 0 THEN 1 ELSE 2 END) AND k % 5 <> 0 THEN CAST(100 * (k % 7) AS INTEGER) END AS startup_ms,
        CASE WHEN (k + 2 * c) % 5 < 2 THEN 'settled' WHEN (k + c) % 2 = 0 THEN 'fresh1' ELSE 'fresh2' END AS grp
      FROM range(600) t(k), range(1, 6) u(c)
      WHERE (k + c) % 3 <> 0
    `);
    for (const g of ['settled', 'fresh1', 'fresh2']) await s.run(`COPY (SELECT * EXCLUDE (grp) FROM cls WHERE grp = '${g}') TO ${quotedString(file(g))} (FORMAT parquet)`);
    // The first base: a band of the top 5 % and 2 values (so that it leaves values out).
    const first = pieceSql('summary_base', { settled: rowsOf(['settled']) });
    await s.run(`COPY (${first}) TO ${quotedString(file('base0'))} (FORMAT parquet)`, { ...params, band_extra_fraction: 0, band_margin: 2n }, types);
    const step = async (from: string, settled: string[], fresh: string, to: string) => {
      const sql = pieceSql('summary_base_step', { fresh: rowsOf([fresh]), settled: rowsOf(settled), base: rowsOf([from]) });
      await s.run(`CREATE OR REPLACE TEMP TABLE step AS ${sql}`, params, types);
      const { ok } = await s.one<{ ok: boolean }>('SELECT bool_and(valid) AS ok FROM step');
      expect(ok, `step to ${to}`).toBe(true);
      await s.run(`COPY (SELECT * EXCLUDE (valid) FROM step ORDER BY streamId, kind) TO ${quotedString(file(to))} (FORMAT parquet)`);
    };
    await step('base0', ['settled'], 'fresh1', 'base1');
    await step('base1', ['settled', 'fresh1'], 'fresh2', 'base2');
    // What plain SQL gives over the classes of each base: the rows of all its groups.
    for (const [name, groups] of [['all1', ['settled', 'fresh1']], ['all2', ['settled', 'fresh1', 'fresh2']]] as const) {
      await s.run(`COPY (SELECT * FROM cls WHERE grp IN (${groups.map((g) => `'${g}'`).join(', ')})) TO ${quotedString(file(name))} (FORMAT parquet)`);
    }
    await s.run(`COPY cls TO ${quotedString(file('cls'))} (FORMAT parquet)`);
  });
}, 120_000);

afterAll(async () => {
  await wh?.close();
});

/** Plain SQL over the class rows of `all`: what a base of them holds, its band from the first base's lower end. */
async function expected(all: string, kind: string): Promise<Record<string, unknown>[]> {
  const rows = rowsOf([all]);
  const windows = `(SELECT unnest(${`[${WINDOW_NAMES.map((w) => `'${w}'`).join(', ')}]`}) AS windowName, generate_subscripts(${`[${WINDOW_NAMES.map((w) => `'${w}'`).join(', ')}]`}, 1) AS wclass)`;
  const sql: Record<string, string> = {
    part: `SELECT streamId, class, CAST(sum(reports) AS BIGINT), CAST(sum(off) AS BIGINT), CAST(sum(fb) AS BIGINT), sum(buf_sum), CAST(sum(buf_n) AS BIGINT),
             CAST(sum(stalls) AS BIGINT), max(last_ts), CAST(sum(stall_ms) AS BIGINT), CAST(sum(watch_ms) AS BIGINT), CAST(sum(p2p_att) AS BIGINT), CAST(sum(p2p_ok) AS BIGINT)
           FROM ${rows} GROUP BY ALL ORDER BY ALL`,
    window: `WITH per_session AS (
               SELECT w.windowName, r.streamId, r.sessionId, sum(peer_sum) AS ps, sum(peer_n) AS pn, max(startup_ms) AS v
               FROM ${rows} AS r JOIN ${windows} AS w ON r.class <= w.wclass GROUP BY ALL
             ),
             first_band AS (SELECT windowName, streamId, band_min FROM read_parquet(${quotedString(file('base0'))}) WHERE kind = 'window')
             SELECT p.windowName, p.streamId, count(*), sum(CAST(ps / pn AS DECIMAL(38, 12))) FILTER (WHERE pn > 0), count(*) FILTER (WHERE pn > 0), count(v),
               any_value(f.band_min), list(v ORDER BY v DESC) FILTER (WHERE v >= coalesce(f.band_min, v))
             FROM per_session AS p LEFT JOIN first_band AS f USING (windowName, streamId)
             GROUP BY ALL ORDER BY ALL`,
    late: `SELECT streamId, sessionId, max(last_ts), max(last_final_ts) FROM ${rows} GROUP BY ALL HAVING max(last_ts) >= TIMESTAMP '2026-11-10 10:20:00' ORDER BY ALL`,
  };
  return wh.db.withSession((s) => s.all(sql[kind]!));
}

describe('a summary base one step on', () => {
  it.each([
    ['one step', 'base1', 'all1'],
    ['two steps', 'base2', 'all2'],
  ])('%s: the rows plain SQL gives over all of its classes', async (_what, base, all) => {
    for (const kind of ['part', 'window', 'late']) {
      const got = (await kindRows(base, kind)).map((r) => Object.values(r));
      const want = (await expected(all, kind)).map((r) => Object.values(r));
      expect(got.length, `${base} ${kind} rows`).toBeGreaterThan(0);
      expect(got, `${base} ${kind}`).toEqual(want);
    }
  });

  it('covers what it should: split sessions, repeated band values, a band that leaves values out', async () => {
    const [row] = await wh.db.withSession((s) =>
      s.all<{ split: bigint; repeats: bigint; cut: bigint }>(`
        SELECT
          (SELECT count(*) FROM (SELECT sessionId FROM ${rowsOf(['cls'])} GROUP BY ALL HAVING count(DISTINCT grp) > 1)) AS split,
          (SELECT count(*) FROM read_parquet(${quotedString(file('base2'))}) WHERE kind = 'window' AND len(band) > len(list_distinct(band))) AS repeats,
          (SELECT count(*) FROM read_parquet(${quotedString(file('base2'))}) WHERE kind = 'window' AND band_min IS NOT NULL) AS cut
      `),
    );
    expect(Number(row!.split)).toBeGreaterThan(50);
    expect(Number(row!.repeats)).toBeGreaterThan(0);
    expect(Number(row!.cut)).toBeGreaterThan(0);
  });
});
