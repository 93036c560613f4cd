// A few sessions with known numbers, rolled up and checked against figures worked out by hand:
// a duplicate in another file, a control session, a session across the 1 h edge, a report exactly
// at asOf − 1h, one exactly at asOf, one after asOf, an old session and a stream with no bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { landingPath, writeReportsParquet, type HandReport } from '../helpers/reports.ts';
import { runPipeline, type PipelineResult } from '../../jobs/pipeline.ts';
import { currentSnapshot, readStreamSummaries, type StreamSummary } from '../../warehouse/snapshots/snapshot-read.ts';
import { fileList } from '../../warehouse/duckdb/sql-text.ts';
import { snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';

const AS_OF = new Date('2026-11-20T12:00:00Z');
const LIVE = 'hand:live';
const VOD = 'hand:vod';

const r = (o: HandReport): HandReport => o;
const S1 = [
  r({ reportId: 's1-0', sessionId: 'S1', streamId: LIVE, ts: '2026-11-20T11:30:00Z', seq: 0, bytesOffloaded: 100, bytesFallback: 900, peerCount: 1, bufferHealth: 2, stallCount: 1, stallMs: 800 }),
  r({ reportId: 's1-1', sessionId: 'S1', streamId: LIVE, ts: '2026-11-20T11:30:30Z', seq: 1, bytesOffloaded: 600, bytesFallback: 400, peerCount: 3, bufferHealth: 10 }),
  r({ reportId: 's1-2', sessionId: 'S1', streamId: LIVE, ts: '2026-11-20T11:31:00Z', seq: 2, final: true, bytesOffloaded: 300, bytesFallback: 100, peerCount: 5, bufferHealth: 12 }),
];
const S2 = [
  r({ reportId: 's2-0', sessionId: 'S2', streamId: LIVE, ts: '2026-11-20T11:59:00Z', cohort: 'control', bytesFallback: 1000, peerCount: 0, bufferHealth: 5 }),
  r({ reportId: 's2-1', sessionId: 'S2', streamId: LIVE, ts: '2026-11-20T11:59:30Z', cohort: 'control', seq: 1, bytesFallback: 500, peerCount: 0, bufferHealth: 7 }),
  // After asOf: counts for nothing in this snapshot.
  r({ reportId: 's2-2', sessionId: 'S2', streamId: LIVE, ts: '2026-11-20T12:00:30Z', cohort: 'control', seq: 2, final: true, bytesFallback: 99_999, peerCount: 0, bufferHealth: 99 }),
];
const S3 = [
  r({ reportId: 's3-0', sessionId: 'S3', streamId: LIVE, ts: '2026-11-20T10:59:30Z', bytesOffloaded: 200, bytesFallback: 200, peerCount: 2, bufferHealth: 4 }),
  // Exactly asOf − 1h: outside the 1h window (its lower bound is open), inside 24h.
  r({ reportId: 's3-1', sessionId: 'S3', streamId: LIVE, ts: '2026-11-20T11:00:00Z', seq: 1, bytesOffloaded: 400, bytesFallback: 0, peerCount: 4, bufferHealth: 8 }),
  r({ reportId: 's3-2', sessionId: 'S3', streamId: LIVE, ts: '2026-11-20T11:00:30Z', seq: 2, final: true, bytesOffloaded: 100, bytesFallback: 100, peerCount: 6, bufferHealth: 6 }),
];
const S4 = [r({ reportId: 's4-0', sessionId: 'S4', streamId: LIVE, ts: '2026-11-17T12:00:00Z', final: true, bytesOffloaded: 50, bytesFallback: 50, peerCount: 2, bufferHealth: 3 })];
// Exactly at asOf: counts (ts <= asOf), and keeps the session active.
const S5 = [r({ reportId: 's5-0', sessionId: 'S5', streamId: LIVE, ts: '2026-11-20T12:00:00Z', bytesOffloaded: 10, peerCount: 1, bufferHealth: 1 })];
// 50 days before asOf, no bytes and no peer or buffer readings.
const V1 = [r({ reportId: 'v1-0', sessionId: 'V1', streamId: VOD, ts: '2026-10-01T00:00:00Z', contentType: 'vod', final: true })];

let wh: TestWarehouse;
let run: PipelineResult;
let summaries: StreamSummary[];

function summary(window: string, streamId: string): StreamSummary {
  const s = summaries.find((x) => x.windowName === window && x.streamId === streamId);
  if (!s) throw new Error(`no summary for ${window} ${streamId}`);
  return s;
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  await writeReportsParquet(wh.db, landingPath(wh.root, 'hand', '2026-11-20', 'a.parquet'), [...S1, ...S2, ...S3, ...S5]);
  // The SDK retried S1's second report; the copy landed in another file.
  await writeReportsParquet(wh.db, landingPath(wh.root, 'hand', '2026-11-20', 'b-retry.parquet'), [S1[1]!]);
  await writeReportsParquet(wh.db, landingPath(wh.root, 'hand', '2026-11-17', 'c.parquet'), S4);
  await writeReportsParquet(wh.db, landingPath(wh.root, 'hand', '2026-10-01', 'd.parquet'), V1);
  run = await runPipeline(wh, { asOf: AS_OF });
  const snap = await currentSnapshot(wh.layout);
  summaries = await readStreamSummaries(wh.db, snap!);
});

afterAll(async () => {
  await wh?.close();
});

describe('hand-worked rollup', () => {
  it('counts the duplicate once and leaves the report after asOf out', () => {
    expect(run.manifest.rows.reportsRead).toBe(13); // 12 distinct reports + 1 retry copy
    expect(run.manifest.rows.afterAsOf).toBe(1);
    expect(run.manifest.rows.duplicatesDropped).toBe(1);
    expect(run.manifest.rows.reports).toBe(11);
    expect(run.manifest.quarantined).toEqual([]);
  });

  it('1h window: (11:00, 12:00], the report at exactly 11:00 excluded', () => {
    const s = summary('1h', LIVE);
    expect(s.totalSessions).toBe(4); // S1, S2, S3 (11:00:30 only), S5
    expect(s.totalBytesOffloaded).toBe(1000 + 0 + 100 + 10);
    expect(s.totalBytesFallback).toBe(1400 + 1500 + 100 + 0);
    expect(s.avgOffloadRatio).toBeCloseTo(1110 / 4110, 12);
    expect(s.avgPeerCount).toBeCloseTo((3 + 0 + 6 + 1) / 4, 12); // session means: S1 3, S2 0, S3 6, S5 1
    expect(s.avgBufferHealth).toBeCloseTo((2 + 10 + 12 + 5 + 7 + 6 + 1) / 7, 12);
    expect(s.activePeers).toBe(2); // S2 (11:59:30, not final) and S5 (12:00:00)
    expect(s.live).toBe(true);
    expect(s.lastSeenAt?.toISOString()).toBe('2026-11-20T12:00:00.000Z');
  });

  it('24h window adds the part of S3 before the 1h edge', () => {
    const s = summary('24h', LIVE);
    expect(s.totalSessions).toBe(4);
    expect(s.totalBytesOffloaded).toBe(1000 + 700 + 10);
    expect(s.totalBytesFallback).toBe(1400 + 1500 + 300);
    expect(s.avgOffloadRatio).toBeCloseTo(1710 / 4910, 12);
    expect(s.avgPeerCount).toBeCloseTo((3 + 0 + 4 + 1) / 4, 12);
    expect(s.avgBufferHealth).toBeCloseTo(55 / 9, 12);
  });

  it('7d, 30d and all add the session of three days ago', () => {
    for (const w of ['7d', '30d', 'all']) {
      const s = summary(w, LIVE);
      expect(s.totalSessions).toBe(5);
      expect(s.totalBytesOffloaded).toBe(1760);
      expect(s.totalBytesFallback).toBe(3250);
      expect(s.avgOffloadRatio).toBeCloseTo(1760 / 5010, 12);
      expect(s.avgPeerCount).toBeCloseTo(2, 12);
      expect(s.avgBufferHealth).toBeCloseTo(5.8, 12);
      expect(s.activePeers).toBe(2);
    }
  });

  it('a stream with no bytes has ratio 0, and appears only in the windows that hold its reports', () => {
    expect(summaries.filter((s) => s.streamId === VOD).map((s) => s.windowName)).toEqual(['all']);
    const s = summary('all', VOD);
    expect(s).toMatchObject({ totalSessions: 1, totalBytesOffloaded: 0, totalBytesFallback: 0, avgOffloadRatio: 0, activePeers: 0, live: false });
    expect(s.lastSeenAt?.toISOString()).toBe('2026-10-01T00:00:00.000Z');
  });

  it('600 s buckets: whole aligned buckets, boundary report in the bucket that starts with it', async () => {
    const snap = await currentSnapshot(wh.layout);
    const files = snap!.manifest.partitions.map((p) => snapshotFiles(snap!.dir).series(p.customerId));
    const rows = await wh.db.withSession((s) =>
      s.all<{ start: string; sessions: number; off: number; fb: number; peers: number; stalls: number }>(
        `SELECT strftime(bucketStart, '%Y-%m-%dT%H:%M:%SZ') AS start, sessions, bytesOffloaded AS off, bytesFallback AS fb,
                avgPeerCount AS peers, rebufferEvents AS stalls
         FROM read_parquet(${fileList(files)}) WHERE streamId = 'hand:live' AND bucketSeconds = 600 ORDER BY bucketStart`,
      ),
    );
    expect(rows.map((x) => [x.start, x.sessions, x.off, x.fb, x.peers, x.stalls])).toEqual([
      ['2026-11-17T12:00:00Z', 1, 50, 50, 2, 0],
      ['2026-11-20T10:50:00Z', 1, 200, 200, 2, 0],
      ['2026-11-20T11:00:00Z', 1, 500, 100, 5, 0], // 11:00:00 and 11:00:30
      ['2026-11-20T11:30:00Z', 1, 1000, 1400, 3, 1],
      ['2026-11-20T11:50:00Z', 1, 0, 1500, 0, 0],
      ['2026-11-20T12:00:00Z', 1, 10, 0, 1, 0], // the 12:00:30 report is after asOf
    ]);
  });

  it('platform-wide rows add up the streams', async () => {
    const snap = await currentSnapshot(wh.layout);
    const rows = await wh.db.withSession((s) =>
      s.all<{ windowName: string; streams: number; totalSessions: number; avgPeerCount: number; activePeers: number }>(
        `SELECT windowName, streams, totalSessions, avgPeerCount, activePeers FROM read_parquet('${snapshotFiles(snap!.dir).platform}')`,
      ),
    );
    const byWindow = Object.fromEntries(rows.map((x) => [x.windowName, x]));
    expect(byWindow['1h']!.streams).toBe(1);
    expect(byWindow['all']!.streams).toBe(2);
    expect(byWindow['all']!.totalSessions).toBe(6);
    // V1 has no peer readings, so the mean is over the five live sessions.
    expect(byWindow['all']!.avgPeerCount).toBeCloseTo(2, 12);
    expect(byWindow['all']!.activePeers).toBe(2);
  });
});
