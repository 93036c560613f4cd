// An export reads a day's files at a time, and names only the columns that those files have: a
// column that some other day's files have (a newer SDK's, a compacted file's provenance) reads as
// null (counters as 0) where the day's files lack it, and the export does not fail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { text } from 'node:stream/consumers';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { landingPath, writeReportsParquet } from '../helpers/reports.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { loadSnapshot } from '../../served/snapshot-store.ts';
import { ResponseCache } from '../../served/response-cache.ts';
import { EXPORT_SLICE_BYTES, startExport } from '../../api/export/export.ts';

let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse();
  const base = { sessionId: 's1', streamId: 'acme:main', bytesUploaded: 9, region: 'us-east' };
  await writeReportsParquet(wh.db, landingPath(wh.root, 'acme', '2026-11-19', 'old-sdk.parquet'), [{ ...base, reportId: 'a', ts: '2026-11-19T10:00:00Z' }], ['region', 'bytesUploaded']);
  await writeReportsParquet(wh.db, landingPath(wh.root, 'acme', '2026-11-20', 'new-sdk.parquet'), [{ ...base, reportId: 'b', ts: '2026-11-20T10:00:00Z' }]);
});

afterAll(async () => {
  await wh?.close();
});

describe('an export over days whose files have different columns', () => {
  it('reads each day with the columns its files have', async () => {
    const run = await runPipeline(wh, { asOf: new Date('2026-11-21T00:00:00Z') });
    const snap = await loadSnapshot(wh.db, wh.layout, run.manifest.snapshot, new ResponseCache(1 << 20));
    const body = await startExport(wh.db, wh.layout, snap, 'acme:main', 'all', 'ndjson', { signal: new AbortController().signal, dayTimeoutMs: 60_000, sliceBytes: EXPORT_SLICE_BYTES });
    const rows = (await text(body)).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => [r['reportId'], r['region'], r['bytesUploaded']])).toEqual([
      ['a', null, 0],
      ['b', 'us-east', 9],
    ]);
  });
});
