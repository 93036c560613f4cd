// A publication is seen through the folder watch alone (no polling here): CURRENT is replaced by
// writing a temporary file and renaming it, two events in a row, and the second must not be lost
// in the check the first one started.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { writeJsonDurable } from '../../lib/fsx.ts';

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi({ env: { SNAPSHOT_POLL_SECONDS: '600' } });
}, 240_000);

afterAll(async () => {
  await t?.close();
});

async function servedWithin(id: string, ms: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < ms) {
    if (((await t.get('/readyz')).json as { snapshot?: string }).snapshot === id) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${id} not served within ${ms} ms`);
}

describe('following CURRENT', () => {
  it('serves each move of the pointer within 2 s, without polling', async () => {
    const first = (await readCurrent(t.wh.layout))!;
    const run = await runPipeline(t.wh, { asOf: new Date(Date.parse(first.asOf) + 60_000) });
    expect(await servedWithin(run.manifest.snapshot, 2_000)).toBeLessThan(2_000);
    // Back and forth by rewriting the pointer, as a rollback would.
    for (const pointer of [first, (await readCurrent(t.wh.layout))!, first]) {
      await writeJsonDurable(t.wh.layout.currentPointer, pointer);
      expect(await servedWithin(pointer.snapshot, 2_000)).toBeLessThan(2_000);
    }
  });
});
