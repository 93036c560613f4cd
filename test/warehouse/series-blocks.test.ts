// Series blocks (docs/warehouse-state.md): past days of a customer's series published as one file
// of 64 or 8 days, and the complete days of the 8-day span that holds asOf's date as one more. Which days go into blocks is checked by hand-worked cases; then, on real runs,
// the files a snapshot publishes, and its figures against the independent SQL over the raw
// files, before and after a late file lands into a blocked day (the block is rebuilt under a new
// name, the old one is retired), and against a from-scratch run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { expectSnapshotMatchesIndependent } from '../helpers/figures-check.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { planSeriesBlocks } from '../../warehouse/publish/series-blocks.ts';
import type { StateMeta } from '../../warehouse/states/state-store.ts';
import { listFiles } from '../../lib/fsx.ts';
import { publishedDir } from '../../warehouse/snapshots/snapshot-folders.ts';
import { listSeriesFiles, seriesFilesIn } from '../../warehouse/reads/series-read.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';

const meta = (customerId: string, date: string): StateMeta => ({ customerId, date, stateId: `${customerId}-${date}` }) as unknown as StateMeta;
const days = (from: string, n: number) => Array.from({ length: n }, (_, i) => new Date(Date.parse(`${from}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10));

describe('which days are read through blocks', () => {
  // Days since the epoch: 2026-10-02 is 20728 = 8 × 2591, so 8-day spans run 10-02..10-09,
  // 10-10..10-17, 10-18..10-25; the 64-day span 20672..20735 is 08-07..10-09.
  it('blocks the complete spans with two days or more, largest first, per customer', () => {
    const states = [...days('2026-10-01', 24).map((d) => meta('acme', d)), meta('globex', '2026-10-11'), meta('globex', '2026-10-12'), meta('globex', '2026-10-20')];
    const { blocks, singles } = planSeriesBlocks(states, '2026-10-25');
    expect(blocks.map((b) => `${b.customerId} ${b.first}..${b.last} ${b.states.length}`).sort()).toEqual([
      'acme 2026-08-07..2026-10-09 9',
      'acme 2026-10-10..2026-10-17 8',
      // The span of asOf's date is not complete: its days before asOf's are one block of their own.
      'acme 2026-10-18..2026-10-24 7',
      'globex 2026-10-10..2026-10-17 2',
    ]);
    // A lone day of that span stays single.
    expect(singles.map((m) => `${m.customerId} ${m.date}`).sort()).toEqual(['globex 2026-10-20']);
  });

  it("blocks the complete days of asOf's span from the first that has a state, never asOf's own day", () => {
    const states = ['2026-10-19', '2026-10-21', '2026-10-22', '2026-10-23'].map((d) => meta('acme', d));
    const { blocks, singles } = planSeriesBlocks(states, '2026-10-23');
    expect(blocks.map((b) => `${b.first}..${b.last} ${b.states.map((m) => m.date.slice(8)).join(',')}`)).toEqual(['2026-10-19..2026-10-22 19,21,22']);
    expect(singles.map((m) => m.date)).toEqual(['2026-10-23']);
    // On the first day of a span, there is no complete day in it yet.
    expect(planSeriesBlocks([meta('acme', '2026-10-17'), meta('acme', '2026-10-18')], '2026-10-18').blocks).toEqual([]);
  });

  it('leaves alone a span that ends on asOf date, and one with a single day', () => {
    const { blocks, singles } = planSeriesBlocks([meta('acme', '2026-10-10'), meta('acme', '2026-10-17'), meta('acme', '2026-10-20')], '2026-10-17');
    expect(blocks).toEqual([]);
    expect(singles).toHaveLength(3);
    // The same days once asOf has moved past the span: one block of its two days.
    expect(planSeriesBlocks([meta('acme', '2026-10-10'), meta('acme', '2026-10-17')], '2026-10-18').blocks.map((b) => b.first)).toEqual(['2026-10-10']);
  });

  it('a read of a range opens the blocks and days that meet it', () => {
    const files = [
      { date: '2026-08-07', last: '2026-10-09', path: 'a' },
      { date: '2026-10-10', last: '2026-10-17', path: 'b' },
      { date: '2026-10-18', last: '2026-10-18', path: 'c' },
      { date: null, last: null, path: 'z' },
    ];
    const at = (d: string) => Date.parse(`${d}T12:00:00Z`);
    expect(seriesFilesIn(files, at('2026-10-09'), at('2026-10-10'))).toEqual(['a', 'b', 'z']);
    expect(seriesFilesIn(files, at('2026-10-17'), null)).toEqual(['b', 'c', 'z']);
    expect(seriesFilesIn(files, null, at('2026-08-06'))).toEqual(['z']);
  });
});

describe('series blocks in real runs', () => {
  let wh: TestWarehouse;
  let scratch: TestWarehouse;
  const asOf = new Date('2026-10-25T06:00:00Z');

  beforeAll(async () => {
    // Grace 0: retired blocks are removed by the run that stops using them.
    wh = await openTestWarehouse({ SNAPSHOT_DEBRIS_GRACE_SECONDS: '0' });
    scratch = await openTestWarehouse();
    await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 2, sessions: 120, start: new Date('2026-10-01T00:00:00Z'), hours: 24 * 24 + 6, seed: 11 });
  }, 120_000);

  afterAll(async () => {
    await wh?.close();
    await scratch?.close();
  });

  const blockFiles = async () => (await fs.readdir(path.join(wh.layout.state, 'customer=acme'))).filter((f) => f.startsWith('series-')).sort();

  it('publishes past days as blocks, with the figures of the raw files, and rebuilds a block a late file changes', async () => {
    const first = await runPipeline(wh, { asOf });
    const snapDir = publishedDir(wh.layout, first.manifest.snapshot);
    const published = (await listFiles(path.join(snapDir, 'stream_timeseries', 'customer=acme'), '.parquet')).map((f) => path.relative(snapDir, f)).sort();
    expect(published).toEqual([
      'stream_timeseries/customer=acme/date=2026-08-07/through-2026-10-09.parquet',
      'stream_timeseries/customer=acme/date=2026-10-10/through-2026-10-17.parquet',
      // The complete days of asOf's span (the data ends on 10-24: asOf's own day has none).
      'stream_timeseries/customer=acme/date=2026-10-18/through-2026-10-24.parquet',
    ]);
    expect((await fs.readdir(path.join(wh.layout.rawReports, 'customer=acme'))).sort().at(-1)).toBe('date=2026-10-24');
    expect((await listSeriesFiles(snapDir, 'acme')).slice(0, 2).map((f) => `${f.date}..${f.last}`)).toEqual(['2026-08-07..2026-10-09', '2026-10-10..2026-10-17']);
    await expectSnapshotMatchesIndependent(wh.db, wh.layout, first.manifest.snapshot, 'first run');
    // A block has exactly the columns of a day's file (no column from the state area's folders).
    const columnsOf = (rel: string) =>
      wh.db.withSession((s) => s.all<{ column_name: string; column_type: string }>(`DESCRIBE SELECT * FROM read_parquet(${quotedString(path.join(snapDir, rel))}, hive_partitioning = false)`));
    expect(await columnsOf(published[0]!)).toEqual(await columnsOf(published.at(-1)!));
    const before = await blockFiles();
    expect(before).toHaveLength(3);

    // A late file into 2026-10-12 (inside the 10-10..10-17 block): new reports of another seed.
    await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 2, sessions: 5, start: new Date('2026-10-12T03:00:00Z'), hours: 2, seed: 12 });
    const second = await runPipeline(wh, { asOf });
    await expectSnapshotMatchesIndependent(wh.db, wh.layout, second.manifest.snapshot, 'after a late file');
    const after = await blockFiles();
    // The 64-day block is the same file, and so is the block of asOf's span; the 8-day block has a
    // new name, and the old one is gone.
    expect(after).toHaveLength(3);
    expect(after.find((f) => f.startsWith('series-2026-10-18_2026-10-24'))).toBe(before.find((f) => f.startsWith('series-2026-10-18_2026-10-24')));
    expect(after.find((f) => f.startsWith('series-2026-08-07_2026-10-09'))).toBe(before.find((f) => f.startsWith('series-2026-08-07_2026-10-09')));
    expect(after.find((f) => f.startsWith('series-2026-10-10_2026-10-17'))).not.toBe(before.find((f) => f.startsWith('series-2026-10-10_2026-10-17')));

    // A from-scratch run over the same files publishes the same rows.
    await fs.cp(wh.layout.rawReports, scratch.layout.rawReports, { recursive: true });
    const base = await runPipeline(scratch, { asOf, rebuild: true });
    expectSameSnapshotRows(await snapshotRows(wh.db, wh.layout, second.manifest.snapshot), await snapshotRows(scratch.db, scratch.layout, base.manifest.snapshot));
  });
});
