// The class units of a customer's days before asOf's date are read through two groups of files
// (class-units.ts): the day files of the units that stay settled for the rest of asOf's date (the
// runs of days between the edges), one per block of four days (combine-plan.ts settledBlockOf),
// and the hour file of the others (the days the edges fall in), each made at once from its units'
// hour files (no file of each unit). Every file a snapshot links is sorted by stream, the files
// hold those days' classes (each file its own days), a later hour of the same day remakes the hour
// file only, and a late file landed into one day remakes the day file of that day's block only.
// The settled layers of asOf's date, which the hour file reads from their own files (written in no
// order), are covered by summary-bases.test.ts. Every session's reports of each window class, over
// all of the snapshot's class files, equal those of a plain SQL over the raw files; the other
// figures are checked against independent SQL by rollup-figures.test.ts and breakdowns.test.ts.
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

/** Every session's reports of each window class over `parts`, less and more than plain SQL over the raw files gives (reports up to asOf, each reportId once). */
async function againstRaw(parts: readonly string[], asOfIso: string): Promise<{ extra: number; missing: number; n: number }> {
  return wh.db.withSession(async (s) => {
    const asOf = `TIMESTAMP '${asOfIso}'`;
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
    return { extra: Number(d!.extra), missing: Number(d!.missing), n: Number(d!.n) };
  });
}

/** A snapshot's session class files of acme (part-0 on). */
async function partsOf(snapshot: string): Promise<string[]> {
  const files = snapshotFiles(publishedDir(wh.layout, snapshot));
  const partsDir = path.dirname(files.sessionClassesPart('acme', 0));
  return (await fs.readdir(partsDir))
    .filter((n) => /^part-\d+\.parquet$/.test(n))
    .sort((a, b) => Number(/\d+/.exec(a)![0]) - Number(/\d+/.exec(b)![0]))
    .map((n) => path.join(partsDir, n));
}

describe('class units read through the day and hour files', () => {
  it('are made at once into sorted files, each of its days, that count every report of its class', async () => {
    // asOf on 11-09 at noon: 11-01 (before the 7d edge) and 11-03..11-07 (between the 7d and 24h
    // edges) are the units settled all day, made into a file of each block of four days since the
    // epoch: part-1 (11-01; its block is 10-31..11-03, where 11-02 is the 7d edge's day), part-2
    // (11-03..11-06) and part-3 (11-07; block 11-07..11-10). 11-02 (the 7d edge) and 11-08 (the
    // 24h edge) are the units of the hour, made into part-4. Part-0 is the cut hours', part-5 asOf's day.
    const run = await runPipeline(wh, { asOf: new Date('2026-11-09T12:00:00Z'), rebuild: true, compact: false });
    const parts = await partsOf(run.manifest.snapshot);
    expect(parts.length).toBe(6);
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
      // The day files hold the days between the edges, a block each; the hour file the edges' days.
      const days = async (part: number) =>
        (await s.all<{ d: string }>(`SELECT DISTINCT strftime(last_ts, '%Y-%m-%d') AS d FROM read_parquet(${quotedString(parts[part]!)}) ORDER BY d`)).map((r) => r.d);
      expect(await days(1)).toEqual(['2026-11-01']);
      expect(await days(2)).toEqual(['2026-11-03', '2026-11-04', '2026-11-05', '2026-11-06']);
      expect(await days(3)).toEqual(['2026-11-07']);
      expect(await days(4)).toEqual(['2026-11-02', '2026-11-08']);
    });
    // Each session's reports of each window class, over every class file of the snapshot (a
    // session's part of a class may be split over rows and files), against the raw files.
    const first = await againstRaw(parts, '2026-11-09 12:00:00');
    expect(first.n).toBeGreaterThan(0);
    expect(first).toMatchObject({ extra: 0, missing: 0 });

    // Three hours later on the same day: the day files are the same ones (linked, not made
    // again); that of the edges' days is made anew, as the edges moved.
    const later = await runPipeline(wh, { asOf: new Date('2026-11-09T15:30:00Z'), compact: false });
    const laterParts = await partsOf(later.manifest.snapshot);
    for (const p of [1, 2, 3]) expect(await inode(laterParts[p]!), `part-${p}`).toBe(await inode(parts[p]!));
    expect(await inode(laterParts[4]!)).not.toBe(await inode(parts[4]!));

    // A late file of 11-05 (a state rebuilt, as after a deployment): only its block's day file is
    // made again, and the classes still count every report.
    await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 3, sessions: 4, start: new Date('2026-11-05T10:00:00Z'), hours: 2, seed: 12 });
    const late = await runPipeline(wh, { asOf: new Date('2026-11-09T15:30:00Z'), replaceCurrent: true, compact: false });
    const lateParts = await partsOf(late.manifest.snapshot);
    expect(lateParts.length).toBe(6);
    expect(await inode(lateParts[1]!)).toBe(await inode(parts[1]!));
    expect(await inode(lateParts[2]!)).not.toBe(await inode(parts[2]!));
    expect(await inode(lateParts[3]!)).toBe(await inode(parts[3]!));
    const after = await againstRaw(lateParts, '2026-11-09 15:30:00');
    expect(after.n).toBeGreaterThan(first.n);
    expect(after).toMatchObject({ extra: 0, missing: 0 });
  }, 120_000);
});
