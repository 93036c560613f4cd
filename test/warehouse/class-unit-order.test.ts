// The class units of a customer's days before asOf's date are read through one combined file
// (class-units.ts): those units' own files are written in no order (only the combined copy is
// sorted), every file a snapshot links is sorted by stream, and the combined file holds exactly
// the rows of the units it combines. The figures themselves are checked against independent SQL
// by rollup-figures.test.ts and breakdowns.test.ts.
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
  await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 3, sessions: 30, start: new Date('2026-11-01T00:00:00Z'), hours: 108, seed: 11 });
}, 120_000);

afterAll(async () => {
  await wh?.close();
});

const inode = async (f: string) => (await fs.stat(f)).ino;

describe('class units read through the combined file', () => {
  it('are written unsorted, the files the snapshot links sorted, the combined one their rows', async () => {
    // asOf on 11-05 at noon: the days 11-01..11-03 one unit, 11-04 (the 24h edge) another; both combined.
    const run = await runPipeline(wh, { asOf: new Date('2026-11-05T12:00:00Z'), rebuild: true, compact: false });
    const files = snapshotFiles(publishedDir(wh.layout, run.manifest.snapshot));
    const partsDir = path.dirname(files.sessionClassesPart('acme', 0));
    const parts = (await fs.readdir(partsDir)).filter((n) => /^part-\d+\.parquet$/.test(n)).map((n) => path.join(partsDir, n));
    expect(parts.length).toBeGreaterThanOrEqual(3); // the cut hours, the combined file, asOf's day
    const stateDir = path.join(wh.layout.state, 'customer=acme');
    const stateClasses = (await fs.readdir(stateDir)).filter((n) => /^classes-[0-9a-f]+\.parquet$/.test(n)).map((n) => path.join(stateDir, n));
    const linked = new Set(await Promise.all(parts.map(inode)));
    const unlinked: string[] = [];
    for (const f of stateClasses) if (!linked.has(await inode(f))) unlinked.push(f);
    // The two units of the days before asOf's date, computed to be combined and linked by no snapshot.
    expect(unlinked.length).toBe(2);

    await wh.db.withSession(async (s) => {
      for (const f of parts) {
        const [r] = await s.all<{ rows: number; out_of_order: number }>(
          `SELECT count(*) AS rows, count(*) FILTER (WHERE prev > streamId) AS out_of_order
           FROM (SELECT streamId, lag(streamId) OVER (ORDER BY file_row_number) AS prev FROM read_parquet(${quotedString(f)}, file_row_number = true))`,
        );
        if (!f.endsWith('part-0.parquet')) expect(Number(r!.rows), f).toBeGreaterThan(0); // part-0: the cut hours (none at a whole hour)
        expect(Number(r!.out_of_order), f).toBe(0);
      }
      // part-1 is the combined file: the multiset of the unit files' rows, no more, no less.
      const combined = `SELECT * FROM read_parquet(${quotedString(files.sessionClassesPart('acme', 1))})`;
      const units = `SELECT * FROM read_parquet(${fileList(unlinked)})`;
      const [d] = await s.all<{ extra: number; missing: number; n: number }>(
        `SELECT (SELECT count(*) FROM (${combined} EXCEPT ALL ${units})) AS extra,
                (SELECT count(*) FROM (${units} EXCEPT ALL ${combined})) AS missing,
                (SELECT count(*) FROM (${units})) AS n`,
      );
      expect(Number(d!.n)).toBeGreaterThan(0);
      expect(Number(d!.extra)).toBe(0);
      expect(Number(d!.missing)).toBe(0);
    });
  }, 120_000);
});
