// The deduplication rule over files that carry provenance (a compacted file's `_source_file` and
// `_source_row`): a row is ranked where it first landed, not where it lies now, and a row seen
// twice (a compacted file beside a file it covers) counts once. Rollups, the catalog and exports
// all apply it, and none of them shows the provenance columns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { landingPath, writeReportsParquet, type HandReport } from '../helpers/reports.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { REPORT_COLUMNS } from '../../warehouse/session-reports/columns.ts';
import { readStreamSummaries } from '../../warehouse/snapshots/snapshot-read.ts';
import { currentSnapshot } from '../../warehouse/snapshots/snapshot-read.ts';
import { loadStreamReports } from '../../warehouse/reads/stream-session-reports.ts';

const AS_OF = new Date('2026-11-20T06:00:00Z');
const DAY = '2026-11-20';
const report = (bytesOffloaded: number, reportId = 'r1'): HandReport => ({
  reportId,
  sessionId: 's1',
  streamId: 'acme:main',
  ts: '2026-11-20T01:00:00Z',
  bytesOffloaded,
});

let wh: TestWarehouse;

/** A file as a compaction writes it: `rows`, each with the file and row it first landed in. */
async function writeCompacted(name: string, rows: { report: HandReport; file: string; row: number }[]): Promise<void> {
  const plain = landingPath(wh.root, 'acme', DAY, `${name}.plain`);
  await writeReportsParquet(wh.db, plain, rows.map((r) => r.report));
  const provenance = rows.map((r, i) => `(${i}, ${quotedString(r.file)}, ${r.row})`).join(', ');
  await wh.db.withSession((s) =>
    s.run(
      `COPY (SELECT p.* EXCLUDE (i), v._source_file, v._source_row::BIGINT AS _source_row
             FROM (SELECT * EXCLUDE (file_row_number), file_row_number AS i FROM read_parquet(${quotedString(plain)}, file_row_number = true)) AS p
             JOIN (VALUES ${provenance}) AS v(i, _source_file, _source_row) USING (i)
             ORDER BY i)
       TO ${quotedString(landingPath(wh.root, 'acme', DAY, name))} (FORMAT parquet)`,
    ),
  );
  await fs.rm(plain);
}

async function catalogRows(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(wh.layout.catalog, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJS();
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/**
 * The deduplicated reports that work on demand reads (an on-demand series size, a pilot report):
 * every landed file of the partition, as the snapshot lists them.
 */
async function onDemandReports(streamId = 'acme:main'): Promise<{ reportId: string; bytesOffloaded: number }[]> {
  const snap = (await currentSnapshot(wh.layout))!;
  const partition = snap.manifest.partitions.find((p) => p.customerId === 'acme')!;
  const inputs = { files: partition.files.map((f) => path.join(wh.layout.rawReports, f.path)), presentColumns: partition.presentColumns };
  return wh.db.withSession(async (s) => {
    await loadStreamReports(s, inputs, streamId, AS_OF, REPORT_COLUMNS.map((c) => c.name));
    const columns = (await s.all<{ column_name: string }>('DESCRIBE reports')).map((r) => r.column_name);
    expect(columns).toEqual(REPORT_COLUMNS.map((c) => c.name));
    return s.all<{ reportId: string; bytesOffloaded: number }>('SELECT reportId, bytesOffloaded::DOUBLE AS bytesOffloaded FROM reports ORDER BY reportId');
  });
}

async function offloaded(): Promise<number> {
  const snap = (await currentSnapshot(wh.layout))!;
  const rows = await readStreamSummaries(wh.db, snap, 'all');
  return Number(rows.find((r) => r.streamId === 'acme:main')!.totalBytesOffloaded);
}

beforeAll(async () => {
  wh = await openTestWarehouse();
});

afterAll(async () => {
  await wh?.close();
});

describe('the deduplication rule over provenance', () => {
  it('ranks a compacted row where it first landed, whatever the compacted file is called', async () => {
    // a.parquet (100) was compacted into zz-compacted.parquet; b.parquet (7) landed later. The
    // copy of a.parquet is first by (file, row), though zz… sorts after b….
    await writeReportsParquet(wh.db, landingPath(wh.root, 'acme', DAY, 'b.parquet'), [report(7)]);
    await writeCompacted('zz-compacted.parquet', [
      { report: report(5, 'r0'), file: 'a.parquet', row: 0 },
      { report: report(100), file: 'a.parquet', row: 1 },
    ]);
    await runPipeline(wh, { asOf: AS_OF });
    expect(await offloaded()).toBe(105);
    const rows = await catalogRows(`SELECT * FROM session_reports ORDER BY reportId`);
    expect(rows.map((r) => [r['reportId'], Number(r['bytesOffloaded'])])).toEqual([
      ['r0', 5],
      ['r1', 100],
    ]);
    expect(Object.keys(rows[0]!)).toEqual(REPORT_COLUMNS.map((c) => c.name));
    expect(await onDemandReports()).toEqual([
      { reportId: 'r0', bytesOffloaded: 5 },
      { reportId: 'r1', bytesOffloaded: 100 },
    ]);
  });

  it('counts a row once when the compacted file and the file it covers are both read', async () => {
    // The crash case: a.parquet still there beside its compacted copy.
    await writeReportsParquet(wh.db, landingPath(wh.root, 'acme', DAY, 'a.parquet'), [report(5, 'r0'), report(100)]);
    await runPipeline(wh, { asOf: AS_OF });
    expect(await offloaded()).toBe(105);
    const [row] = await catalogRows(`SELECT count(*) AS n, sum(bytesOffloaded) AS b FROM session_reports`);
    expect([Number(row!['n']), Number(row!['b'])]).toEqual([2, 105]);
    expect(await onDemandReports()).toEqual([
      { reportId: 'r0', bytesOffloaded: 5 },
      { reportId: 'r1', bytesOffloaded: 100 },
    ]);
    // A stream without a report: no row, every column.
    expect(await onDemandReports('acme:none')).toEqual([]);
    await wh.db.withSession(async (s) => {
      await loadStreamReports(s, { files: [], presentColumns: [] }, 'acme:main', AS_OF, REPORT_COLUMNS.map((c) => c.name));
      expect(await s.all('SELECT * FROM reports')).toEqual([]);
      expect((await s.all<{ column_name: string }>('DESCRIBE reports')).map((r) => r.column_name)).toEqual(REPORT_COLUMNS.map((c) => c.name));
    });
  });

  it('quarantines a file whose provenance columns have the wrong types, or a negative row', async () => {
    const plain = landingPath(wh.root, 'acme', DAY, 'x.plain');
    await writeReportsParquet(wh.db, plain, [report(1, 'r9')]);
    const write = (name: string, provenance: string) =>
      wh.db.withSession((s) =>
        s.run(`COPY (SELECT *, ${provenance} FROM read_parquet(${quotedString(plain)})) TO ${quotedString(landingPath(wh.root, 'acme', DAY, name))} (FORMAT parquet)`),
      );
    await write('typed-wrong.parquet', `42 AS _source_file, 'x' AS _source_row`);
    await write('negative-row.parquet', `'a.parquet' AS _source_file, -1::BIGINT AS _source_row`);
    await fs.rm(plain);
    const run = await runPipeline(wh, { asOf: AS_OF });
    expect(run.manifest.quarantined.map((q) => [q.relPath.split('/').at(-1), q.detail]).sort()).toEqual([
      ['negative-row.parquet', '_source_row negative: 1 row'],
      ['typed-wrong.parquet', 'column _source_file is INTEGER, expected VARCHAR; column _source_row is VARCHAR, expected BIGINT'],
    ]);
    expect(await offloaded()).toBe(105);
  });
});
