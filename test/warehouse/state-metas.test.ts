// Partition states' meta.json files are parsed once per process (state-store.ts readStates): a
// meta read again is the same frozen object while its file is unchanged, and read anew when the
// file changed (size or modification time); a removed state is no longer listed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { readStates, stateFiles } from '../../warehouse/states/state-store.ts';

let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse();
  await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 1, sessions: 20, start: new Date('2026-11-20T00:00:00Z'), hours: 30, seed: 5 });
  await runPipeline(wh, { asOf: new Date('2026-11-21T06:00:00Z') });
});

afterAll(async () => {
  await wh?.close();
});

describe('state metas', () => {
  it('are parsed once while unchanged, frozen, and read anew when their file changes', async () => {
    const first = await readStates(wh.layout);
    const again = await readStates(wh.layout);
    const [key, metas] = [...first.entries()][0]!;
    expect(first.size).toBeGreaterThan(0);
    expect(again.get(key)![0]).toBe(metas[0]);
    expect(Object.isFrozen(metas[0])).toBe(true);
    expect(Object.isFrozen(metas[0]!.files)).toBe(true);
    expect(() => (metas[0]!.files as unknown[]).push({})).toThrow(TypeError);

    // The file rewritten (another count, another size): read anew.
    const file = stateFiles(wh.layout, metas[0]!).meta;
    const json = JSON.parse(await fs.readFile(file, 'utf8')) as { reports: number };
    await fs.writeFile(file, JSON.stringify({ ...json, reports: json.reports + 1000 }));
    const changed = (await readStates(wh.layout)).get(key)![0]!;
    expect(changed).not.toBe(metas[0]);
    expect(changed.reports).toBe(metas[0]!.reports + 1000);

    // Removed: gone from the next read.
    await fs.rm(stateFiles(wh.layout, metas[0]!).dir, { recursive: true });
    expect((await readStates(wh.layout)).get(key)?.some((m) => m.stateId === metas[0]!.stateId) ?? false).toBe(false);
  });
});
