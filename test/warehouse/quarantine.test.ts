// Bad input files are moved to quarantine with a reason, counted in the run, and never stop the
// rollup of the good ones; files with missing optional columns are read, not quarantined.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { landingPath, writeReportsParquet, type HandReport } from '../helpers/reports.ts';
import { runPipeline, type PipelineResult } from '../../jobs/pipeline.ts';
import { currentSnapshot, readStreamSummaries } from '../../warehouse/snapshots/snapshot-read.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';

const AS_OF = new Date('2026-11-20T12:00:00Z');
const good = (id: string, extra: Partial<HandReport> = {}): HandReport => ({
  reportId: id,
  sessionId: `sess-${id}`,
  streamId: 'acme:live',
  ts: '2026-11-20T11:50:00Z',
  bytesOffloaded: 100,
  bytesFallback: 300,
  peerCount: 2,
  bufferHealth: 4,
  ...extra,
});

let wh: TestWarehouse;
let run: PipelineResult;

beforeAll(async () => {
  wh = await openTestWarehouse();
  const at = (name: string, date = '2026-11-20', customer = 'acme') => landingPath(wh.root, customer, date, name);
  await writeReportsParquet(wh.db, at('good.parquet'), [good('g1'), good('g2')]);
  // Optional columns missing: read as null (counters as 0), not quarantined.
  await writeReportsParquet(wh.db, at('thin.parquet'), [good('t1', { bytesFallback: 0 })], ['peerCount', 'bufferHealth', 'bytesFallback', 'fallbackReasons']);
  // Not Parquet at all.
  await fs.writeFile(at('garbage.parquet'), 'this is not a parquet file');
  // Lacks a required column.
  await writeReportsParquet(wh.db, at('no-ts.parquet'), [good('x1')], ['ts']);
  // Another customer's rows in acme's folder.
  await writeReportsParquet(wh.db, at('foreign.parquet'), [good('x2'), good('x3', { streamId: 'globex:live' })]);
  // Rows of 2026-11-20 in the folder of 2026-11-19.
  await writeReportsParquet(wh.db, at('wrong-day.parquet', '2026-11-19'), [good('x4')]);
  // A column of the wrong type.
  await fs.mkdir(path.dirname(at('typed.parquet')), { recursive: true });
  await wh.db.withSession((s) =>
    s.run(
      `COPY (SELECT 'x5' AS reportId, 's' AS sessionId, 'acme:live' AS streamId, TIMESTAMP '2026-11-20 11:00:00' AS ts,
                    'lots' AS bytesOffloaded) TO ${quotedString(at('typed.parquet'))} (FORMAT parquet)`,
    ),
  );
  // A malformed stream id.
  await writeReportsParquet(wh.db, at('bad-id.parquet'), [good('x6', { streamId: 'acme:has space' })]);
  // A valid footer over broken data pages: only a full read finds it.
  const broken = at('broken-pages.parquet');
  await writeReportsParquet(wh.db, broken, Array.from({ length: 2000 }, (_, i) => good(`b${i}`)));
  const bytes = await fs.readFile(broken);
  bytes.fill(0x5a, 64, Math.floor(bytes.length / 2));
  await fs.writeFile(broken, bytes);
  // Outside any partition folder.
  await fs.writeFile(path.join(wh.layout.rawReports, 'stray.parquet'), await fs.readFile(at('good.parquet')));
  run = await runPipeline(wh, { asOf: AS_OF });
}, 120_000);

afterAll(async () => {
  await wh?.close();
});

describe('quarantine', () => {
  it('moves every bad file out with its reason and keeps the good ones', async () => {
    const reasons = Object.fromEntries(run.manifest.quarantined.map((q) => [path.basename(q.relPath), q.reason]));
    expect(reasons).toEqual({
      'garbage.parquet': 'not a readable Parquet file',
      'no-ts.parquet': 'lacks a required column',
      'foreign.parquet': 'holds rows of another partition',
      'wrong-day.parquet': 'holds rows of another partition',
      'typed.parquet': 'a column has the wrong type',
      'bad-id.parquet': 'holds rows that break the session report contract',
      'broken-pages.parquet': 'not a readable Parquet file',
      'stray.parquet': 'not in a partition folder',
    });
    const landed = (await fs.readdir(path.join(wh.layout.rawReports, 'customer=acme', 'date=2026-11-20'))).sort();
    expect(landed).toEqual(['good.parquet', 'thin.parquet']);
    for (const q of run.manifest.quarantined) {
      const moved = path.join(wh.layout.quarantine, q.relPath);
      await expect(fs.access(moved)).resolves.toBeUndefined();
      const reason = JSON.parse(await fs.readFile(`${moved}.reason.json`, 'utf8'));
      expect(reason).toMatchObject({ reason: q.reason, runId: run.runId });
      expect(reason.detail).not.toContain(wh.root); // no paths in reasons
    }
  });

  it('names what is wrong in the detail', () => {
    const detail = (name: string) => run.manifest.quarantined.find((q) => q.relPath.endsWith(name))!.detail;
    expect(detail('no-ts.parquet')).toContain('missing required column ts');
    expect(detail('typed.parquet')).toContain('bytesOffloaded is VARCHAR');
    expect(detail('foreign.parquet')).toBe('streamId of another customer than the folder: 1 row');
    expect(detail('wrong-day.parquet')).toBe("ts on another UTC date than the folder's: 1 row");
    expect(detail('bad-id.parquet')).toBe('streamId malformed: 1 row');
  });

  it('computes the figures from the good files only', async () => {
    expect(run.published).toBe(true);
    expect(run.manifest.rows.reports).toBe(3);
    const snap = await currentSnapshot(wh.layout);
    const [s] = await readStreamSummaries(wh.db, snap!, '1h');
    expect(s).toMatchObject({ streamId: 'acme:live', totalSessions: 3, totalBytesOffloaded: 300, totalBytesFallback: 600 });
    // The thin file has no peer or buffer readings: the means are over the two good sessions.
    expect(s!.avgPeerCount).toBe(2);
    expect(s!.avgBufferHealth).toBe(4);
  });

  it('a later run finds nothing more to quarantine', async () => {
    const again = await runPipeline(wh, { asOf: AS_OF });
    expect(again.manifest.quarantined).toEqual([]);
    expect(again.manifest.rows.reports).toBe(3);
  });
});
