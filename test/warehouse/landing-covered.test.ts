// The landing area as runs list it (landing.ts discoverLanding): a compaction record covers its
// files only once its compacted file is placed in their folder; covered files are not listed,
// others are, misplaced files are reported, and a listing of given partitions agrees with the
// listing of all. Hand-worked cases on real files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { discoverLanding } from '../../warehouse/landing/landed-files.ts';
import { partitionFolder, recordFile, writeRecord } from '../../warehouse/landing/compaction-records.ts';

let wh: TestWarehouse;
const folder = partitionFolder('acme', '2026-11-20');
const other = partitionFolder('acme', '2026-11-21');
const dir = () => path.join(wh.layout.rawReports, folder);

async function put(rel: string): Promise<void> {
  const file = path.join(wh.layout.rawReports, rel);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, `not read here: ${rel}`);
}

const listed = async (partitions?: { customerId: string; date: string }[]) => {
  const { files, misplaced } = await discoverLanding(wh.layout, partitions);
  return { files: files.map((f) => f.relPath), misplaced: misplaced.map((m) => m.relPath) };
};

beforeAll(async () => {
  wh = await openTestWarehouse();
  for (const n of ['a.parquet', 'b.parquet', 'c.parquet']) await put(`${folder}/${n}`);
  await put(`${other}/b.parquet`);
  await put('stray.parquet');
  await put(`${folder}/notes.txt`);
  const stat = async (n: string) => fs.stat(path.join(dir(), n));
  const covers = await Promise.all(['a.parquet', 'b.parquet'].map(async (name) => ({ name, size: (await stat(name)).size, mtimeMs: (await stat(name)).mtimeMs })));
  await writeRecord(wh.layout, folder, { compacted: 'merged.parquet', createdAt: new Date().toISOString(), covers });
});

afterAll(async () => wh?.close());

describe('the landing area as runs list it', () => {
  it('a record whose compacted file is not placed covers nothing', async () => {
    expect(await listed()).toEqual({
      files: [`${folder}/a.parquet`, `${folder}/b.parquet`, `${folder}/c.parquet`, `${other}/b.parquet`],
      misplaced: ['stray.parquet'],
    });
  });

  it('once the compacted file is placed, the files it covers are not listed, in its folder only', async () => {
    await put(`${folder}/merged.parquet`);
    const want = [`${folder}/c.parquet`, `${folder}/merged.parquet`, `${other}/b.parquet`];
    expect(await listed()).toEqual({ files: want, misplaced: ['stray.parquet'] });
    // The same when only these partitions are listed (a run's builds), asked twice (a kept set).
    for (let i = 0; i < 2; i++) {
      expect((await listed([{ customerId: 'acme', date: '2026-11-20' }])).files).toEqual([`${folder}/c.parquet`, `${folder}/merged.parquet`]);
    }
    expect((await listed([{ customerId: 'acme', date: '2026-11-21' }])).files).toEqual([`${other}/b.parquet`]);
  });

  it('a file that lands after the compaction is listed, and a removed record covers nothing again', async () => {
    await put(`${folder}/d.parquet`);
    expect((await listed()).files).toEqual([`${folder}/c.parquet`, `${folder}/d.parquet`, `${folder}/merged.parquet`, `${other}/b.parquet`]);
    await fs.rm(recordFile(wh.layout, folder, 'merged.parquet'));
    expect((await listed()).files).toEqual([
      `${folder}/a.parquet`,
      `${folder}/b.parquet`,
      `${folder}/c.parquet`,
      `${folder}/d.parquet`,
      `${folder}/merged.parquet`,
      `${other}/b.parquet`,
    ]);
  });
});
