// A tick's stream summaries from the summary base of the settled classes (summary-bases.ts,
// window_summaries_incremental.sql): the base's counts with the sessions the tick touches added
// and their settled part taken back, the startup percentile from the base's band, activity from
// its late sessions. On ticks just after midnight (sessions that began the day before and are
// still active, sessions whose ids come back), a rerun, new reports in the hour, an asOf on the
// hour and ticks later in the day whose settled classes hold the day's first hours, every summary,
// per-customer, platform and quality row is the same whether the summaries come from the bases
// with the default band, from the smallest band (`0,0`: most streams made again from all of their
// classes), or from all classes (`off`), and equals the independent SQL over the raw files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { expectSnapshotMatchesIndependent } from '../helpers/figures-check.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import path from 'node:path';
import { fileList, quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { SUMMARY_BAND, summaryBases } from '../../warehouse/publish/summary-bases.ts';
import { WINDOW_NAMES } from '../../warehouse/figures/index.ts';
import { publishedDir, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import { keepEnv } from '../helpers/env.ts';

const BASE = new Date('2026-11-10T00:00:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ENV = 'P2PTEL_TEST_SUMMARY_BASES';
// Each tick's reports a layer of their own (no inline merge of small layers), so that the layers
// of the day's first hours end before the hour before a later asOf, and are settled then.
const INLINE_MAX_ENV = 'P2PTEL_TEST_INLINE_MERGE_MAX_REPORTS';
const restoreEnv = keepEnv(ENV, INLINE_MAX_ENV);
const MODES = ['default', '0,0', 'off'] as const;

let wh: TestWarehouse;

async function land(start: number, hours: number, seed: number): Promise<void> {
  for (const [i, customer] of ['acme', 'globex'].entries()) {
    await generateReports(wh.db, wh.layout, { customers: [customer], streams: 3, sessions: [12, 30][i]!, start: new Date(start), hours, seed: seed + i });
  }
}

/** Every row of the per-customer rows, the platform rows and the quality file, in a fixed order. */
async function otherRows(snapshot: string): Promise<Record<string, unknown>[][]> {
  const files = snapshotFiles(publishedDir(wh.layout, snapshot));
  return wh.db.withSession(async (s) => [
    await s.all<Record<string, unknown>>(`SELECT * FROM read_parquet(${quotedString(files.customers)}) ORDER BY ALL`),
    await s.all<Record<string, unknown>>(`SELECT * FROM read_parquet(${quotedString(files.platform)}) ORDER BY ALL`),
    await s.all<Record<string, unknown>>(`SELECT * FROM read_parquet(${quotedString(files.streamQuality)}) ORDER BY ALL`),
  ]);
}

beforeAll(async () => {
  process.env[INLINE_MAX_ENV] = '1';
  wh = await openTestWarehouse();
  // Three days of history, then sessions from 22:00 of the third day into the fourth.
  await land(BASE.getTime(), 3 * 24, 40);
  await land(BASE.getTime() + 3 * DAY - 2 * HOUR, 2.2, 50);
}, 180_000);

afterAll(async () => {
  restoreEnv();
  await wh?.close();
});

describe('summaries from the bases of settled classes', () => {
  it('equal those from all classes and the independent SQL, band or no band', async () => {
    const day = BASE.getTime() + 3 * DAY;
    const ticks: { asOf: number; land?: [number, number, number] }[] = [
      // Midnight: the 1h window's edge cuts no hour, so the active sessions' latest reports are all
      // settled (in the first hour of the day, the last hour of the day before is a cut hour).
      { asOf: day },
      { asOf: day + 5 * 60_000 + 1_234 },
      { asOf: day + HOUR + 40 * 60_000, land: [day + HOUR, 0.5, 60] },
      { asOf: day + 2 * HOUR, land: [day + HOUR + 30 * 60_000, 0.5, 70] },
      // Later in the day the settled units reach the hour before asOf's (settledBeforeUs): the
      // layers of the day's first hours are settled, and sessions that began in them and go on
      // (into the cut hour, or later) are touched by the tick; some of their latest reports lie
      // within the horizon of the settled units' end (the bases' late sessions).
      { asOf: day + 3 * HOUR + 35 * 60_000, land: [day + 2 * HOUR, 1.5, 80] },
      { asOf: day + 5 * HOUR + 10 * 60_000, land: [day + 3 * HOUR + 30 * 60_000, 1.6, 90] },
    ];
    const counts = Object.fromEntries(MODES.map((m) => [m, { fromBase: 0, recomputed: 0, bases: 0 }]));
    let active = 0;
    let settledToday = 0;
    for (const [t, tick] of ticks.entries()) {
      if (tick.land) await land(...tick.land);
      const asOf = new Date(tick.asOf);
      let ref: { rows: Awaited<ReturnType<typeof snapshotRows>>; other: Record<string, unknown>[][] } | null = null;
      for (const mode of MODES) {
        if (mode === 'default') delete process.env[ENV];
        else process.env[ENV] = mode;
        const run = await runPipeline(wh, { asOf, replaceCurrent: true }).finally(() => delete process.env[ENV]);
        const what = `${mode}, tick ${t} (asOf ${asOf.toISOString()})`;
        const c = run.manifest.combine!;
        counts[mode]!.fromBase += c.summaryStreamsFromBase ?? 0;
        counts[mode]!.recomputed += c.summaryStreamsRecomputed ?? 0;
        counts[mode]!.bases += c.summaryBasesComputed ?? 0;
        const rows = await snapshotRows(wh.db, wh.layout, run.manifest.snapshot);
        const other = await otherRows(run.manifest.snapshot);
        if (ref === null) {
          await expectSnapshotMatchesIndependent(wh.db, wh.layout, run.manifest.snapshot, what);
          ref = { rows, other };
          const files = snapshotFiles(publishedDir(wh.layout, run.manifest.snapshot));
          const [row] = await wh.db.withSession((s) => s.all<{ n: bigint }>(`SELECT sum(activePeers) AS n FROM read_parquet(${quotedString(files.platform)})`));
          if (t === 0) active = Number(row?.n ?? 0);
          // The settled classes of the last tick hold sessions of its day: part-1 and part-2 are the
          // customer's files of the days that stay settled all day (the days between the edges:
          // 11-10 and 11-11, in two blocks of four days, combine-plan.ts settledBlockOf), part-3 its
          // file of the others, combined from the day before (the 24h edge's day) and the settled
          // layers of asOf's date. Only such a combined file holds rows of both days (a unit of
          // asOf's date holds that day's rows only).
          if (t === ticks.length - 1) {
            const [today] = await wh.db.withSession((s) =>
              s.all<{ n: bigint; before: bigint }>(
                `SELECT count(*) FILTER (WHERE last_ts >= $day) AS n, count(*) FILTER (WHERE last_ts < $day) AS before
                 FROM read_parquet(${quotedString(files.sessionClassesPart('globex', 3))})`.replaceAll('$day', `${quotedString(new Date(day).toISOString())}::TIMESTAMP`),
              ),
            );
            settledToday = Number(today?.before ?? 0) > 0 ? Number(today?.n ?? 0) : 0;
          }
        } else {
          expectSameSnapshotRows(rows, ref.rows, what);
          expect(other, what).toEqual(ref.other);
        }
      }
    }
    // Sessions whose latest report was of the day before were active at the first tick (the
    // bases' late sessions).
    expect(active).toBeGreaterThan(0);
    expect(settledToday).toBeGreaterThan(0);
    // The default band gave most streams; the smallest made some again from all their classes.
    expect(counts['default']!.fromBase).toBeGreaterThan(0);
    expect(counts['default']!.bases).toBeGreaterThan(0);
    expect(counts['0,0']!.recomputed).toBeGreaterThan(0);
    expect(counts['0,0']!.fromBase).toBeGreaterThan(0);
    expect(counts['off']).toEqual({ fromBase: 0, recomputed: 0, bases: 0 });
  }, 300_000);

  it('composed from the day base and the hour file: the rows of a base of both files, the band every value from its lower end', async () => {
    // The state the ticks above left: history up to the day before, layers of the day. At this asOf
    // the customer has both groups of settled files: part-1 and part-2 (days between the edges,
    // settled all day: 11-10 and 11-11, a block of four days each) and part-3 (the 24h edge's day
    // and the day's settled layers).
    const day = BASE.getTime() + 3 * DAY;
    const asOf = new Date(day + 5 * HOUR + 20 * 60_000);
    const run = await runPipeline(wh, { asOf, replaceCurrent: true });
    const files = snapshotFiles(publishedDir(wh.layout, run.manifest.snapshot));
    const dayFiles = [files.sessionClassesPart('globex', 1), files.sessionClassesPart('globex', 2)];
    const hourFile = files.sessionClassesPart('globex', 3);
    const planOf = (horizonSeconds: number) => ({ layout: wh.layout, asOfUs: BigInt(asOf.getTime()) * 1000n, asOfDate: asOf.toISOString().slice(0, 10), horizonSeconds });
    await wh.db.withSession(async (s) => {
      const [span] = await s.all<{ day_max: string; first_block_max: string; second_block_min: string; hour_min: string; hour_max: string }>(
        `SELECT (SELECT CAST(max(last_ts) AS VARCHAR) FROM read_parquet(${fileList(dayFiles)})) AS day_max,
                (SELECT CAST(max(last_ts) AS VARCHAR) FROM read_parquet(${quotedString(dayFiles[0]!)})) AS first_block_max,
                (SELECT CAST(min(last_ts) AS VARCHAR) FROM read_parquet(${quotedString(dayFiles[1]!)})) AS second_block_min,
                (SELECT CAST(min(last_ts) AS VARCHAR) FROM read_parquet(${quotedString(hourFile)})) AS hour_min,
                (SELECT CAST(max(last_ts) AS VARCHAR) FROM read_parquet(${quotedString(hourFile)})) AS hour_max`,
      );
      expect(Date.parse(`${span!.day_max}Z`)).toBeLessThan(day - DAY); // the days before the 24h edge's
      expect(Date.parse(`${span!.first_block_max}Z`)).toBeLessThan(day - 2 * DAY); // 11-10 in one block ...
      expect(Date.parse(`${span!.second_block_min}Z`)).toBeGreaterThanOrEqual(day - 2 * DAY); // ... 11-11 in the next
      expect(Date.parse(`${span!.hour_min}Z`)).toBeLessThan(day); // the 24h edge's day ...
      expect(Date.parse(`${span!.hour_max}Z`)).toBeGreaterThanOrEqual(day); // ... and the day's settled layers
      // Both files' rows in one file: its base is made from its rows (summary_base.sql), the reference.
      const union = path.join(wh.root, 'settled-union.parquet');
      await s.run(`COPY (SELECT * FROM read_parquet(${fileList([...dayFiles, hourFile])})) TO ${quotedString(union)} (FORMAT parquet)`);
      // The configured horizon, and one of 30 hours: then the late sessions reach back into the day
      // base's own (the days before the 24h edge's), and sessions of both files are late.
      for (const [band, horizon] of [
        [SUMMARY_BAND, wh.config.activityHorizonSeconds],
        [{ extraFraction: 0, margin: 0 }, wh.config.activityHorizonSeconds],
        [SUMMARY_BAND, 30 * 3600],
      ] as const) {
        const plan = planOf(horizon);
        const composed = await summaryBases(s, plan, new Map([['globex', { day: dayFiles, hour: hourFile }]]), band);
        const direct = await summaryBases(s, plan, new Map([['globex', { day: [], hour: union }]]), band);
        const [c, d] = [composed.files.get('globex')!, direct.files.get('globex')!];
        expect(c).not.toBe(d);
        const cols = (await s.all<{ column_name: string }>(`DESCRIBE SELECT * FROM read_parquet(${quotedString(d)})`))
          .map((r) => r.column_name)
          .filter((n) => n !== 'band' && n !== 'band_min')
          .map((n) => `"${n}"`)
          .join(', ');
        const rows = (f: string) => `SELECT ${cols} FROM read_parquet(${quotedString(f)})`;
        const [diff] = await s.all<{ extra: bigint; missing: bigint; n: bigint; windows: bigint; late: bigint }>(
          `SELECT (SELECT count(*) FROM (${rows(c)} EXCEPT ALL ${rows(d)})) AS extra,
                  (SELECT count(*) FROM (${rows(d)} EXCEPT ALL ${rows(c)})) AS missing,
                  (SELECT count(*) FROM read_parquet(${quotedString(d)})) AS n,
                  (SELECT count(*) FROM read_parquet(${quotedString(d)}) WHERE kind = 'window') AS windows,
                  (SELECT count(*) FROM read_parquet(${quotedString(d)}) WHERE kind = 'late') AS late`,
        );
        const what = `band ${band.extraFraction},${band.margin}, horizon ${horizon} s`;
        expect(Number(diff!.windows), what).toBeGreaterThan(0);
        if (horizon > DAY / 1000) expect(Number(diff!.late), what).toBeGreaterThan(0);
        expect(Number(diff!.extra), what).toBe(0);
        expect(Number(diff!.missing), what).toBe(0);
        // The band: every startup time of a session of the window at or above its lower end (all of
        // them when it has none), from the settled rows directly.
        const names = WINDOW_NAMES.map((n) => quotedString(n)).join(', ');
        const [b] = await s.all<{ extra: bigint; missing: bigint; cut: bigint; kept: bigint }>(
          `WITH w AS (SELECT unnest([${names}]) AS windowName, generate_subscripts([${names}], 1) AS class),
           sv AS (
             SELECT w.windowName, r.streamId, r.sessionId, max(r.startup_ms) AS v
             FROM read_parquet(${quotedString(union)}) AS r JOIN w ON r.class <= w.class
             GROUP BY ALL
           ),
           lo AS (SELECT windowName, streamId, band_min FROM read_parquet(${quotedString(c)}) WHERE kind = 'window'),
           expected AS (SELECT sv.windowName, sv.streamId, sv.v FROM sv JOIN lo USING (windowName, streamId) WHERE sv.v IS NOT NULL AND sv.v >= coalesce(lo.band_min, sv.v)),
           got AS (SELECT windowName, streamId, unnest(band) AS v FROM read_parquet(${quotedString(c)}) WHERE kind = 'window')
           SELECT (SELECT count(*) FROM (SELECT * FROM got EXCEPT ALL SELECT * FROM expected)) AS extra,
                  (SELECT count(*) FROM (SELECT * FROM expected EXCEPT ALL SELECT * FROM got)) AS missing,
                  (SELECT count(*) FROM lo WHERE band_min IS NOT NULL) AS cut,
                  (SELECT count(*) FROM got) AS kept`,
        );
        expect(Number(b!.kept), what).toBeGreaterThan(0);
        expect(Number(b!.extra), what).toBe(0);
        expect(Number(b!.missing), what).toBe(0);
        // The smallest band leaves values out: the lower end is used.
        if (band.margin === 0) expect(Number(b!.cut), what).toBeGreaterThan(0);
      }
      // With the day files alone, their base serves every hour of the day: made once, the same file
      // an hour later.
      const alone = await summaryBases(s, planOf(wh.config.activityHorizonSeconds), new Map([['globex', { day: dayFiles, hour: null }]]));
      const later = await summaryBases(s, { ...planOf(wh.config.activityHorizonSeconds), asOfUs: BigInt(asOf.getTime() + HOUR) * 1000n }, new Map([['globex', { day: dayFiles, hour: null }]]));
      expect(later.files.get('globex')).toBe(alone.files.get('globex'));
      expect(later.computed).toBe(0);
    });
  }, 120_000);
});

