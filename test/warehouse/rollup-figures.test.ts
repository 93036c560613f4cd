// Every figure of every window and of every standard bucket size, on generated data, against an
// independent computation written here in plain SQL over the raw files (not the production SQL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { TIMESTAMP } from '@duckdb/node-api';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline, type PipelineResult } from '../../jobs/pipeline.ts';
import { currentSnapshot, type LoadedSnapshot } from '../../warehouse/snapshot-read.ts';
import { fileList, quotedString, toNumber, type DbSession } from '../../warehouse/duckdb.ts';
import { timestampParam } from '../../warehouse/partition-rollup.ts';
import { snapshotFiles } from '../../warehouse/snapshots.ts';
import { STANDARD_BUCKET_SECONDS, WINDOWS } from '../../warehouse/windows.ts';

const HOUR = 3_600_000;
const RECENT_END = new Date('2026-11-20T12:00:00Z');
// Five minutes of reports after asOf must not count.
const AS_OF = new Date(RECENT_END.getTime() - 5 * 60_000);

let wh: TestWarehouse;
let run: PipelineResult;
let snap: LoadedSnapshot;

type Row = Record<string, unknown>;

async function query(sql: string, params: Record<string, unknown> = {}): Promise<Row[]> {
  return wh.db.withSession((s: DbSession) => s.all<Row>(sql, params as never, { as_of: TIMESTAMP, lower: TIMESTAMP }));
}

function expectSameFigure(ours: unknown, theirs: unknown, what: string): void {
  if (typeof ours === 'number' && typeof theirs === 'number' && !(Number.isInteger(ours) && Number.isInteger(theirs))) {
    // Averages: the plain SQL here sums doubles in parallel, so its last digits wander.
    expect(ours, what).toBeCloseTo(theirs, 9);
  } else {
    expect(ours, what).toEqual(theirs);
  }
}

const norm = (v: unknown): unknown =>
  typeof v === 'bigint' ? toNumber(v) : v instanceof Date ? v.toISOString() : v === null ? null : v;

beforeAll(async () => {
  wh = await openTestWarehouse();
  // Forty days of sparse history, then three busy recent hours: every window holds something
  // different, and the first customer's last stream ends early in both.
  await generateReports(wh.db, wh.layout, {
    customers: ['acme', 'globex'],
    streams: 3,
    sessions: 150,
    start: new Date(RECENT_END.getTime() - 40 * 24 * HOUR),
    hours: 40 * 24 - 3,
    seed: 11,
  });
  await generateReports(wh.db, wh.layout, {
    customers: ['acme', 'globex'],
    streams: 3,
    sessions: 120,
    start: new Date(RECENT_END.getTime() - 3 * HOUR),
    hours: 3,
    seed: 12,
  });
  run = await runPipeline(wh, { asOf: AS_OF });
  snap = (await currentSnapshot(wh.layout))!;

  // The independent side: deduplicate by reportId with a window function over every raw file.
  await wh.db.withSession(async (s) => {
    await s.run(
      `CREATE TABLE ind_reports AS
       SELECT * EXCLUDE (rn) FROM (
         SELECT *, row_number() OVER (PARTITION BY reportId ORDER BY filename) AS rn
         FROM read_parquet(${quotedString(path.join(wh.layout.rawReports, '*', '*', '*.parquet'))}, union_by_name = true, filename = true)
       ) WHERE rn = 1 AND ts <= $as_of`,
      { as_of: timestampParam(AS_OF) },
      { as_of: TIMESTAMP },
    );
  });
}, 180_000);

afterAll(async () => {
  await wh?.close();
});

describe('rollup figures equal an independent computation', () => {
  it('reads every report, drops only duplicates and reports after asOf', async () => {
    const [raw] = await query(
      `SELECT count(*) AS n, count(DISTINCT reportId) AS distinct_ids FROM read_parquet(${quotedString(path.join(wh.layout.rawReports, '*', '*', '*.parquet'))})`,
    );
    const [kept] = await query(`SELECT count(*) AS n FROM ind_reports`);
    expect(run.manifest.rows.reportsRead).toBe(norm(raw!['n']));
    expect(run.manifest.rows.reports).toBe(norm(kept!['n']));
    expect(run.manifest.rows.duplicatesDropped).toBeGreaterThan(0);
    expect(run.manifest.rows.afterAsOf).toBeGreaterThan(0);
  });

  for (const w of WINDOWS) {
    it(`stream summaries, window ${w.name}`, async () => {
      const lower = w.seconds === null ? null : new Date(AS_OF.getTime() - w.seconds * 1000);
      const theirs = await query(
        `WITH win AS (
           SELECT * FROM ind_reports WHERE $lower IS NULL OR ts > $lower
         ),
         session_peer AS (
           SELECT streamId, sessionId, avg(peerCount) AS mean_peers FROM win GROUP BY streamId, sessionId
         ),
         latest AS (
           SELECT streamId, sessionId, max(ts) AS last_ts FROM ind_reports GROUP BY streamId, sessionId
         ),
         ended AS (
           SELECT DISTINCT r.streamId, r.sessionId
           FROM ind_reports r JOIN latest l ON r.streamId = l.streamId AND r.sessionId = l.sessionId AND r.ts = l.last_ts
           WHERE r.final
         ),
         active AS (
           SELECT l.streamId, count(*) AS n
           FROM latest l LEFT JOIN ended e ON e.streamId = l.streamId AND e.sessionId = l.sessionId
           WHERE l.last_ts >= $as_of - INTERVAL 120 SECOND AND e.sessionId IS NULL
           GROUP BY l.streamId
         )
         SELECT
           win.streamId,
           count(DISTINCT win.sessionId) AS totalSessions,
           sum(win.bytesOffloaded) AS totalBytesOffloaded,
           sum(win.bytesFallback) AS totalBytesFallback,
           coalesce(sum(win.bytesOffloaded) / nullif(sum(win.bytesOffloaded) + sum(win.bytesFallback), 0), 0) AS avgOffloadRatio,
           (SELECT avg(mean_peers) FROM session_peer sp WHERE sp.streamId = win.streamId) AS avgPeerCount,
           avg(win.bufferHealth) AS avgBufferHealth,
           coalesce((SELECT n FROM active a WHERE a.streamId = win.streamId), 0) AS activePeers,
           max(win.ts) AS lastSeenAt
         FROM win GROUP BY win.streamId ORDER BY win.streamId`,
        { as_of: timestampParam(AS_OF), lower: lower ? timestampParam(lower) : null },
      );
      const files = snap.manifest.partitions.map((p) => snapshotFiles(snap.dir).summaries(p.customerId));
      const ours = await query(
        `SELECT streamId, totalSessions, totalBytesOffloaded, totalBytesFallback, avgOffloadRatio, avgPeerCount,
                avgBufferHealth, activePeers, live, lastSeenAt
         FROM read_parquet(${fileList(files)}) WHERE windowName = '${w.name}' ORDER BY streamId`,
      );
      expect(ours.map((r) => r['streamId'])).toEqual(theirs.map((r) => r['streamId']));
      expect(theirs.length).toBeGreaterThan(0);
      for (let i = 0; i < ours.length; i++) {
        const o = ours[i]!;
        const t = theirs[i]!;
        for (const k of Object.keys(t)) expectSameFigure(norm(o[k]), norm(t[k]), `${w.name} ${String(t['streamId'])} ${k}`);
        expect(o['live']).toBe(toNumber(t['activePeers']) > 0);
      }
    });
  }

  it('windows really differ (the data exercises every window)', async () => {
    const files = snap.manifest.partitions.map((p) => snapshotFiles(snap.dir).summaries(p.customerId));
    const rows = await query(`SELECT windowName, sum(totalSessions) AS n FROM read_parquet(${fileList(files)}) GROUP BY 1 ORDER BY n`);
    const counts = rows.map((r) => toNumber(r['n']));
    expect(new Set(counts).size).toBe(5);
  });

  for (const size of STANDARD_BUCKET_SECONDS) {
    it(`bucket series, ${size} s`, async () => {
      const theirs = await query(
        `WITH b AS (
           SELECT *, to_timestamp(floor(epoch(ts) / ${size}) * ${size}) AS bucket FROM ind_reports
         ),
         session_peer AS (
           SELECT streamId, bucket, sessionId, avg(peerCount) AS mean_peers FROM b GROUP BY ALL
         )
         SELECT streamId, epoch_ms(bucket) AS start, count(DISTINCT sessionId) AS sessions,
                sum(bytesOffloaded) AS bytesOffloaded, sum(bytesFallback) AS bytesFallback,
                coalesce(sum(bytesOffloaded) / nullif(sum(bytesOffloaded) + sum(bytesFallback), 0), 0) AS offloadRatio,
                (SELECT avg(mean_peers) FROM session_peer sp WHERE sp.streamId = b.streamId AND sp.bucket = b.bucket) AS avgPeerCount,
                avg(bufferHealth) AS avgBufferHealth,
                sum(stallCount) AS rebufferEvents
         FROM b GROUP BY streamId, bucket ORDER BY streamId, bucket`,
      );
      const files = snap.manifest.partitions.map((p) => snapshotFiles(snap.dir).series(p.customerId));
      const ours = await query(
        `SELECT streamId, epoch_ms(bucketStart) AS start, sessions, bytesOffloaded, bytesFallback, offloadRatio,
                avgPeerCount, avgBufferHealth, rebufferEvents
         FROM read_parquet(${fileList(files)}) WHERE bucketSeconds = ${size} ORDER BY streamId, bucketStart`,
      );
      expect(ours.length).toBe(theirs.length);
      for (let i = 0; i < ours.length; i++) {
        for (const k of Object.keys(theirs[i]!)) {
          expectSameFigure(norm(ours[i]![k]), norm(theirs[i]![k]), `${size}s row ${i} ${k}`);
        }
      }
    });
  }

  it('platform-wide rows equal the same computation over every stream', async () => {
    const rows = await query(`SELECT * FROM read_parquet(${quotedString(snapshotFiles(snap.dir).platform)}) ORDER BY windowName`);
    for (const row of rows) {
      const w = WINDOWS.find((x) => x.name === row['windowName'])!;
      const lower = w.seconds === null ? null : new Date(AS_OF.getTime() - w.seconds * 1000);
      const [t] = await query(
        `WITH win AS (SELECT * FROM ind_reports WHERE $lower IS NULL OR ts > $lower),
              sp AS (SELECT streamId, sessionId, avg(peerCount) AS m FROM win GROUP BY ALL)
         SELECT count(DISTINCT streamId) AS streams,
                (SELECT count(*) FROM sp) AS totalSessions,
                sum(bytesOffloaded) AS totalBytesOffloaded, sum(bytesFallback) AS totalBytesFallback,
                sum(bytesOffloaded) / (sum(bytesOffloaded) + sum(bytesFallback)) AS avgOffloadRatio,
                (SELECT avg(m) FROM sp) AS avgPeerCount, avg(bufferHealth) AS avgBufferHealth,
                max(ts) AS lastSeenAt
         FROM win`,
        { lower: lower ? timestampParam(lower) : null },
      );
      for (const k of Object.keys(t!)) expectSameFigure(norm(row[k]), norm(t![k]), `platform ${w.name} ${k}`);
    }
  });
});
