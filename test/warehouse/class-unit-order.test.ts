// The class units of a customer's days before asOf's date are read through two files
// (class-units.ts): the day file of the units that stay settled for the rest of asOf's date (the
// runs of days between the edges) and the hour file of the others (the days the edges fall in),
// each made at once from its units' hour files (no file of each unit). Every file a snapshot links
// is sorted by stream, the two files hold those days' classes (each file its own days), and a
// later hour of the same day remakes the hour file only. The settled layers of asOf's date, which
// the hour file reads from their own files (written in no order), are covered by
// summary-bases.test.ts. Every session's reports of each window class, over all of the
// snapshot's class files, equal those of a plain SQL over the raw files; the other figures are
// checked against independent SQL by rollup-figures.test.ts and breakdowns.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { publishedDir, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import { fileList, quotedString } from '../../warehouse/duckdb/sql-text.ts';

let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse();
  await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 3, sessions: 30, start: new Date('2026-11-01T00:00:00Z'), hours: 204, seed: 11 });
}, 120_000);

afterAll(async () => {
  await wh?.close();
});

const inode = async (f: string) => (await fs.stat(f)).ino;

describe('class units read through the day and hour files', () => {
  it('are made at once into sorted files, each of its days, that count every report of its class', async () => {
    // asOf on 11-09 at noon: 11-01 (before the 7d edge) and 11-03..11-07 (between the 7d and 24h
    // edges) are the units settled all day, made into part-1; 11-02 (the 7d edge) and 11-08 (the
    // 24h edge) the units of the hour, made into part-2. Part-0 is the cut hours', part-3 asOf's day.
    const run = await runPipeline(wh, { asOf: new Date('2026-11-09T12:00:00Z'), rebuild: true, compact: false });
    const files = snapshotFiles(publishedDir(wh.layout, run.manifest.snapshot));
    const partsDir = path.dirname(files.sessionClassesPart('acme', 0));
    const parts = (await fs.readdir(partsDir)).filter((n) => /^part-\d+\.parquet$/.test(n)).map((n) => path.join(partsDir, n));
    expect(parts.length).toBe(4);
    const stateDir = path.join(wh.layout.state, 'customer=acme');
    const stateClasses = (await fs.readdir(stateDir)).filter((n) => /^classes-[0-9a-f]+\.parquet$/.test(n)).map((n) => path.join(stateDir, n));
    const linked = new Set(await Promise.all(parts.map(inode)));
    const unlinked: string[] = [];
    for (const f of stateClasses) if (!linked.has(await inode(f))) unlinked.push(f);
    // No unit of the days before asOf's date has a file of its own: every class file is linked.
    expect(unlinked).toEqual([]);

    await wh.db.withSession(async (s) => {
      for (const f of parts) {
        const [r] = await s.all<{ rows: number; out_of_order: number }>(
          `SELECT count(*) AS rows, count(*) FILTER (WHERE prev > streamId) AS out_of_order
           FROM (SELECT streamId, lag(streamId) OVER (ORDER BY file_row_number) AS prev FROM read_parquet(${quotedString(f)}, file_row_number = true))`,
        );
        if (!f.endsWith('part-0.parquet')) expect(Number(r!.rows), f).toBeGreaterThan(0); // part-0: the cut hours (none at a whole hour)
        expect(Number(r!.out_of_order), f).toBe(0);
      }
      // Each session's reports of each window class, over every class file of the snapshot (a
      // session's part of a class may be split over rows and files), against the raw files: the
      // reports up to asOf, each reportId once, classed by the narrowest window that holds its ts.
      const asOf = "TIMESTAMP '2026-11-09 12:00:00'";
      const ours = `SELECT streamId, sessionId, class, sum(reports) AS n FROM read_parquet(${fileList(parts)}) GROUP BY ALL`;
      const theirs = `
        SELECT streamId, sessionId,
               CASE WHEN ts > ${asOf} - INTERVAL 1 HOUR THEN 1 WHEN ts > ${asOf} - INTERVAL 24 HOUR THEN 2
                    WHEN ts > ${asOf} - INTERVAL 7 DAY THEN 3 WHEN ts > ${asOf} - INTERVAL 30 DAY THEN 4 ELSE 5 END AS class,
               count(*) AS n
        FROM (SELECT DISTINCT ON (reportId) * FROM read_parquet(${quotedString(path.join(wh.layout.rawReports, '**', '*.parquet'))}, hive_partitioning = false) WHERE ts <= ${asOf})
        GROUP BY ALL`;
      const [d] = await s.all<{ extra: number; missing: number; n: number }>(
        `SELECT (SELECT count(*) FROM (${ours} EXCEPT ALL ${theirs})) AS extra,
                (SELECT count(*) FROM (${theirs} EXCEPT ALL ${ours})) AS missing,
                (SELECT count(*) FROM (${theirs})) AS n`,
      );
      expect(Number(d!.n)).toBeGreaterThan(0);
      expect(Number(d!.extra)).toBe(0);
      expect(Number(d!.missing)).toBe(0);
      // part-1 holds the days between the edges, part-2 the edges' days.
      const days = async (part: number) =>
        (await s.all<{ d: string }>(`SELECT DISTINCT strftime(last_ts, '%Y-%m-%d') AS d FROM read_parquet(${quotedString(files.sessionClassesPart('acme', part))}) ORDER BY d`)).map((r) => r.d);
      expect(await days(1)).toEqual(['2026-11-01', '2026-11-03', '2026-11-04', '2026-11-05', '2026-11-06', '2026-11-07']);
      expect(await days(2)).toEqual(['2026-11-02', '2026-11-08']);
    });

    // Three hours later on the same day: the file of the days between the edges is the same one
    // (linked, not made again); that of the edges' days is made anew, as the edges moved.
    const later = await runPipeline(wh, { asOf: new Date('2026-11-09T15:30:00Z'), compact: false });
    const laterFiles = snapshotFiles(publishedDir(wh.layout, later.manifest.snapshot));
    expect(await inode(laterFiles.sessionClassesPart('acme', 1))).toBe(await inode(files.sessionClassesPart('acme', 1)));
    expect(await inode(laterFiles.sessionClassesPart('acme', 2))).not.toBe(await inode(files.sessionClassesPart('acme', 2)));
  }, 120_000);
});
