// A warehouse moved or restored into another folder keeps the names of the files its runs made
// (class units' session classes are named by the state files they read: state-store.ts
// durableStateFileName), so that its first run there makes no more than the same run would have
// made where it was, and publishes the same figures. Before 2026-11-30 such names held the
// warehouse's absolute path, and that first run made every unit's classes again.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { currentSnapshot, readStreamSummaries } from '../../warehouse/snapshots/snapshot-read.ts';
import { durableStateFileName } from '../../warehouse/states/state-store.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';

const START = new Date('2026-11-17T06:00:00Z');
const AS_OF = new Date('2026-11-20T10:20:30Z');
/** Two minutes on: the same hour and the same 5-minute slot, so that no edge moves a unit. */
const LATER = new Date(AS_OF.getTime() + 2 * 60_000);

let here: TestWarehouse;
let moved: TestWarehouse;

beforeAll(async () => {
  here = await openTestWarehouse();
  moved = await openTestWarehouse();
  await generateReports(here.db, here.layout, { customers: ['acme', 'globex'], streams: 2, sessions: 20, start: START, hours: 76, seed: 17 });
  await runPipeline(here, { asOf: AS_OF });
  // As `mv` or `cp -a` moves it: the landed files keep their mtimes to the nanosecond, so that
  // the states stay (a landed file's size and mtime say whether it changed). fs.cp's
  // preserveTimestamps keeps them to the microsecond only: every state would be rebuilt.
  await promisify(execFile)('cp', ['-a', `${here.root}/.`, moved.root]);
}, 120_000);

afterAll(async () => {
  await here?.close();
  await moved?.close();
});

describe('a warehouse in another folder', () => {
  it('names a state file by its place in the state area, not by the warehouse folder', () => {
    const file = (root: string, ...rest: string[]) => path.join(root, 'state', 'customer=acme', ...rest);
    const named = (root: string, ...rest: string[]) => durableStateFileName(warehouseLayout(root), file(root, ...rest));
    expect(named('/srv/a', 'date=2026-11-19', 's1', 'hours.parquet')).toBe('customer=acme/date=2026-11-19/s1/hours.parquet');
    expect(named('/srv/b', 'date=2026-11-19', 's1', 'hours.parquet')).toBe('customer=acme/date=2026-11-19/s1/hours.parquet');
    expect(named('/srv/a', 'hours-0123abcd.parquet')).toBe(named('/mnt/x/y', 'hours-0123abcd.parquet'));
    // A layer's file: by its partition and name, whatever state folder links it.
    expect(named('/srv/a', 'date=2026-11-20', 's2', 'layer-L1-hours.parquet')).toBe('customer=acme/date=2026-11-20/layer-L1-hours.parquet');
    expect(named('/srv/b', 'date=2026-11-20', 's3', 'layer-L1-hours.parquet')).toBe('customer=acme/date=2026-11-20/layer-L1-hours.parquet');
  });

  it('makes no more class units at its first run there than the same run makes where it was, with the same figures', async () => {
    const there = await runPipeline(moved, { asOf: LATER });
    const again = await runPipeline(here, { asOf: LATER });
    const t = there.manifest.combine!;
    const h = again.manifest.combine!;
    expect(there.manifest.partitions.flatMap((p) => p.states ?? []).every((st) => st.action === 'reuse')).toBe(true);
    expect(t.classUnitsLinked).toBe(h.classUnitsLinked);
    // The days before asOf's date keep their classes within the hour: most units are reused.
    expect(h.classUnitsComputed!).toBeLessThan(h.classUnitsLinked! / 2);
    expect(t.classUnitsComputed).toBe(h.classUnitsComputed);

    const rows = async (wh: TestWarehouse) =>
      (await readStreamSummaries(wh.db, (await currentSnapshot(wh.layout))!)).map((r) => JSON.stringify(r)).sort();
    const moves = await rows(moved);
    expect(moves.length).toBeGreaterThan(0);
    expect(moves).toEqual(await rows(here));
  });
});
