// End to end: a generated set of reports (with the ~1 % that the generator delivers twice) is posted
// through a real collector on loopback in gzip'd batches, flushed, and rolled up; every figure of the
// snapshot (stream and customer and platform summaries of every window, every bucket of the series)
// equals the figures of the same reports written directly as files. The landed files have the
// column types of docs/sdk-ingest.md, the same as `generate` writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { startTestCollector, type TestCollector } from '../helpers/collector.ts';
import { expectSameRows, norm, type Row } from '../helpers/independent.ts';
import { generateReports, type GenerateResult } from '../../warehouse/sample/generate.ts';
import { runPipeline, type PipelineResult } from '../../jobs/pipeline.ts';
import { currentSnapshot } from '../../warehouse/snapshots/snapshot-read.ts';
import { replayReports, type ReplayResult } from '../../sdk/replay.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { listFiles } from '../../lib/fsx.ts';
import { REPORT_COLUMNS } from '../../warehouse/session-reports/columns.ts';

const HOUR = 3_600_000;
// Whole seconds: the generator's start; the data ends a little before now, inside the ts window.
const END = Math.floor(Date.now() / 60_000) * 60_000 - 2 * 60_000;
const AS_OF = new Date(END - 5 * 60_000);

let direct: TestWarehouse;
let t: TestCollector;
let generated: GenerateResult;
const replays: ReplayResult[] = [];
let runs: { direct: PipelineResult; posted: PipelineResult };

beforeAll(async () => {
  direct = await openTestWarehouse();
  generated = await generateReports(direct.db, direct.layout, {
    customers: ['acme', 'globex'],
    streams: 2,
    sessions: 60,
    start: new Date(END - 30 * HOUR),
    hours: 30,
    seed: 7,
  });
  t = await startTestCollector();
  for (const customer of ['acme', 'globex']) {
    const files = generated.files.filter((f) => f.includes(`${path.sep}customer=${customer}${path.sep}`));
    replays.push(
      await replayReports(direct.db, files, path.join(direct.root, 'replay', customer), { url: t.url, key: t.keys[customer]!, batchSize: 500, concurrency: 4 }),
    );
  }
  await t.collector.flush();
  runs = {
    direct: await runPipeline(direct, { asOf: AS_OF }),
    posted: await runPipeline(t.wh, { asOf: AS_OF }),
  };
}, 240_000);

afterAll(async () => {
  await t?.close();
  await direct?.close();
});

async function rows(wh: TestWarehouse, glob: string, order: string): Promise<Row[]> {
  const snap = (await currentSnapshot(wh.layout))!;
  return wh.db.withSession((s) =>
    s.all<Row>(`SELECT * EXCLUDE (customer) FROM read_parquet(${quotedString(path.join(snap.dir, glob))}, hive_partitioning = true, union_by_name = true) ORDER BY ${order}`),
  );
}

describe('SDK → collector → landing → rollup', () => {
  it('every generated report was posted and acknowledged', () => {
    const posted = replays.reduce((a, r) => a + r.reports, 0);
    const accepted = replays.reduce((a, r) => a + r.accepted, 0);
    expect(posted).toBe(generated.reports);
    expect(accepted).toBe(generated.reports);
    expect(replays.every((r) => r.rejected === 0)).toBe(true);
    expect(runs.posted.manifest.rows.reportsRead).toBe(runs.direct.manifest.rows.reportsRead);
    expect(runs.posted.manifest.rows.reports).toBe(runs.direct.manifest.rows.reports);
    expect(runs.posted.manifest.rows.duplicatesDropped).toBe(runs.direct.manifest.rows.duplicatesDropped);
    expect(runs.posted.manifest.rows.duplicatesDropped).toBeGreaterThan(0);
  });

  it('landed files have the column types of docs/sdk-ingest.md (as generate writes them)', async () => {
    const landed = await listFiles(t.wh.layout.rawReports, '.parquet');
    expect(landed.every((f) => /customer=(acme|globex)\/date=\d{4}-\d{2}-\d{2}\/ingest-[a-f0-9]{16}-\d{13}[a-f0-9]{6}-\d{12}-\d+\.parquet$/.test(f))).toBe(true);
    const describe = (file: string, wh: TestWarehouse) =>
      wh.db.withSession((s) => s.all<{ column_name: string; column_type: string }>(`DESCRIBE SELECT * FROM read_parquet(${quotedString(file)}, hive_partitioning = false)`));
    const ours = await describe(landed[0]!, t.wh);
    const theirs = await describe(generated.files[0]!, direct);
    expect(ours).toEqual(theirs);
    expect(ours.map((c) => [c.column_name, c.column_type])).toEqual(REPORT_COLUMNS.map((c) => [c.name, c.type]));
  });

  it('stream summaries of every window are equal', async () => {
    const order = 'windowName, streamId';
    const a = await rows(direct, 'stream_summaries/*/*.parquet', order);
    const b = await rows(t.wh, 'stream_summaries/*/*.parquet', order);
    expect(a.length).toBeGreaterThan(0);
    expect(b.map((r) => `${norm(r['windowName'])} ${norm(r['streamId'])}`)).toEqual(a.map((r) => `${norm(r['windowName'])} ${norm(r['streamId'])}`));
    expectSameRows(b, a, 'stream summaries');
  });

  it('every bucket of the series is equal', async () => {
    const order = 'streamId, bucketSeconds, bucketStart';
    const a = await rows(direct, 'stream_timeseries/**/*.parquet', order);
    const b = await rows(t.wh, 'stream_timeseries/**/*.parquet', order);
    expect(a.length).toBeGreaterThan(100);
    expectSameRows(b, a, 'series');
  });

  it('customer and platform summaries are equal', async () => {
    for (const [file, order] of [
      ['customer_summaries.parquet', 'windowName, customer'],
      ['platform_summaries.parquet', 'windowName'],
    ] as const) {
      const read = async (wh: TestWarehouse) => {
        const snap = (await currentSnapshot(wh.layout))!;
        return wh.db.withSession((s) => s.all<Row>(`SELECT * FROM read_parquet(${quotedString(path.join(snap.dir, file))}) ORDER BY ${order}`));
      };
      const a = await read(direct);
      expect(a.length).toBeGreaterThan(0);
      expectSameRows(await read(t.wh), a, file);
    }
  });
});
