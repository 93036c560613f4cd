// The analyst catalog: every example query of docs/analysts.md runs against catalog.duckdb,
// opened read-only by another process in another working directory, and the views hold the
// snapshot's own figures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline, type PipelineResult } from '../../jobs/pipeline.ts';
import { PROJECT_ROOT } from '../../lib/version.ts';

const run = promisify(execFile);
let wh: TestWarehouse;
let result: PipelineResult;

type Outcome = { rows?: number; first?: Record<string, unknown> | null; error?: string };

async function queryCatalog(queries: string[]): Promise<Outcome[]> {
  const { stdout } = await run(
    process.execPath,
    [path.join(PROJECT_ROOT, 'bin/run-ts.js'), path.join(PROJECT_ROOT, 'test/fixtures/query-catalog.ts'), wh.layout.catalog, JSON.stringify(queries)],
    { cwd: os.tmpdir() },
  );
  return stdout.trim().split('\n').map((l) => JSON.parse(l) as Outcome);
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  const start = new Date('2026-11-20T00:00:00Z');
  await generateReports(wh.db, wh.layout, { customers: ['acme', 'globex'], streams: 3, sessions: 80, start, hours: 6, seed: 5 });
  result = await runPipeline(wh, { asOf: new Date('2026-11-20T06:00:00Z') });
});

afterAll(async () => {
  await wh?.close();
});

describe('analyst catalog', () => {
  it('runs every example query of docs/analysts.md', async () => {
    const doc = await fs.readFile(path.join(PROJECT_ROOT, 'docs/analysts.md'), 'utf8');
    const queries = [...doc.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
    expect(queries.length).toBeGreaterThanOrEqual(5);
    const outcomes = await queryCatalog(queries);
    outcomes.forEach((o, i) => {
      expect(o.error, queries[i]).toBeUndefined();
      expect(o.rows, queries[i]).toBeGreaterThan(0);
    });
  });

  it('its views hold the snapshot: deduplicated reports up to asOf, summaries, series, platform rows', async () => {
    const [info, reports, metrics, summaries, series, platform] = await queryCatalog([
      'SELECT snapshot, snapshotAsOf FROM snapshot_info',
      'SELECT count(*) AS n, count(DISTINCT reportId) AS ids, max(ts) <= (SELECT snapshotAsOf FROM snapshot_info) AS cut FROM session_reports',
      'SELECT count(*) AS n FROM stream_metrics',
      'SELECT count(*) AS n FROM stream_summaries',
      'SELECT count(*) AS n FROM stream_timeseries',
      "SELECT totalSessions FROM platform_summaries WHERE windowName = 'all'",
    ]);
    expect(info, JSON.stringify(info)).not.toHaveProperty('error');
    expect(info!.first).toEqual({ snapshot: result.manifest.snapshot, snapshotAsOf: '2026-11-20 06:00:00' });
    expect(reports!.first).toEqual({ n: String(result.manifest.rows.reports), ids: String(result.manifest.rows.reports), cut: true });
    expect(Number(metrics!.first!['n'])).toBe(result.manifest.rows.streamSummaries);
    expect(Number(summaries!.first!['n'])).toBe(result.manifest.rows.streamSummaries);
    expect(Number(series!.first!['n'])).toBe(result.manifest.rows.streamTimeseries);
    expect(Number(platform!.first!['totalSessions'])).toBeGreaterThan(0);
  });
});
