// Every figure of every window and of every standard bucket size, on generated data, against an
// independent computation in plain SQL over the raw files (test/helpers/independent.ts), not the
// production SQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import type { TestWarehouse } from '../helpers/warehouse.ts';
// Its asOf is five minutes before the last reports: those must not count.
import { AS_OF, historyWarehouse } from '../helpers/api.ts';
import { expectSameFigure, expectSameRows, Independent, norm, type Row } from '../helpers/independent.ts';
import { currentSnapshot, type LoadedSnapshot } from '../../warehouse/snapshots/snapshot-read.ts';
import { fileList, quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import { STANDARD_BUCKET_SECONDS, WINDOWS } from '../../warehouse/figures/windows.ts';

let wh: TestWarehouse;
let snap: LoadedSnapshot;
let ind: Independent;

async function query(sql: string): Promise<Row[]> {
  return wh.db.withSession((s) => s.all<Row>(sql));
}

beforeAll(async () => {
  // The generated history rolled up at AS_OF, as the API tests have it (built once a test run).
  wh = await historyWarehouse();
  snap = (await currentSnapshot(wh.layout))!;
  ind = await Independent.create(wh.db, wh.layout.rawReports, AS_OF);
}, 180_000);

afterAll(async () => {
  await wh?.close();
});

describe('rollup figures equal an independent computation', () => {
  it('reads every report, drops only duplicates and reports after asOf', async () => {
    const [raw] = await query(
      `SELECT count(*) AS n FROM read_parquet(${quotedString(path.join(wh.layout.rawReports, '*', '*', '*.parquet'))})`,
    );
    const [kept] = await ind.query(`SELECT count(*) AS n FROM ind_reports`);
    expect(snap.manifest.rows.reportsRead).toBe(norm(raw!['n']));
    expect(snap.manifest.rows.reports).toBe(norm(kept!['n']));
    expect(snap.manifest.rows.duplicatesDropped).toBeGreaterThan(0);
    expect(snap.manifest.rows.afterAsOf).toBeGreaterThan(0);
  });

  for (const w of WINDOWS) {
    it(`stream summaries, window ${w.name}`, async () => {
      const theirs = await ind.summaries(w.name);
      const files = snap.manifest.partitions.map((p) => snapshotFiles(snap.dir).summaries(p.customerId));
      const ours = await query(
        `SELECT streamId, totalSessions, totalBytesOffloaded, totalBytesFallback, avgOffloadRatio, avgPeerCount,
                avgBufferHealth, activePeers, live, lastSeenAt
         FROM read_parquet(${fileList(files)}) WHERE windowName = '${w.name}' ORDER BY streamId`,
      );
      expect(theirs.length).toBeGreaterThan(0);
      expect(ours.map((r) => r['streamId'])).toEqual(theirs.map((r) => r['streamId']));
      expectSameRows(ours, theirs, `window ${w.name}`);
      ours.forEach((o, i) => expect(o['live']).toBe((theirs[i]!['activePeers'] as number) > 0));
    });
  }

  it('windows really differ (the data exercises every window)', async () => {
    const files = snap.manifest.partitions.map((p) => snapshotFiles(snap.dir).summaries(p.customerId));
    const rows = await query(`SELECT windowName, sum(totalSessions) AS n FROM read_parquet(${fileList(files)}) GROUP BY 1 ORDER BY n`);
    expect(new Set(rows.map((r) => r['n'])).size).toBe(5);
  });

  for (const size of STANDARD_BUCKET_SECONDS) {
    it(`bucket series, ${size} s`, async () => {
      const theirs = await ind.series(size);
      const files = snap.manifest.partitions.map((p) => snapshotFiles(snap.dir).series(p.customerId));
      const ours = await query(
        `SELECT streamId, epoch_ms(bucketStart) AS start, sessions, bytesOffloaded, bytesFallback, offloadRatio,
                avgPeerCount, avgBufferHealth, rebufferEvents
         FROM read_parquet(${fileList(files)}) WHERE bucketSeconds = ${size} ORDER BY streamId, bucketStart`,
      );
      expectSameRows(ours, theirs, `${size} s series`);
    });
  }

  it('platform-wide rows equal the same computation over every stream', async () => {
    const rows = await query(`SELECT * FROM read_parquet(${quotedString(snapshotFiles(snap.dir).platform)}) ORDER BY windowName`);
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      const w = WINDOWS.find((x) => x.name === row['windowName'])!;
      const t = await ind.platform(w.name);
      for (const k of Object.keys(t)) expectSameFigure(row[k], t[k], `platform ${w.name} ${k}`);
    }
  });
});
