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
import { landingPath, writeReportsParquet } from '../helpers/reports.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { currentSnapshot } from '../../warehouse/snapshots/snapshot-read.ts';
import { sessionClassFiles, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import { queryBreakdown, sessionClassesRelation } from '../../warehouse/reads/breakdowns.ts';
import { fixtureArgv } from '../helpers/fixtures.ts';

const run = promisify(execFile);
let wh: TestWarehouse;
let result: PipelineResult;

type Outcome = { rows?: number; first?: Record<string, unknown> | null; error?: string };

async function queryCatalog(queries: string[]): Promise<Outcome[]> {
  const { stdout } = await run(
    process.execPath,
    fixtureArgv('query-catalog.ts', wh.layout.catalog, JSON.stringify(queries)),
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

describe('analyst catalog: window_sessions', () => {
  it("answers docs/analysts.md's breakdown as the API does, figure for figure", async () => {
    const doc = await fs.readFile(path.join(PROJECT_ROOT, 'docs/analysts.md'), 'utf8');
    const query = [...doc.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!.trim()).find((q) => q.includes('FROM window_sessions'))!;
    const [outcome] = await queryCatalog([query]);
    const snap = (await currentSnapshot(wh.layout))!;
    const rows = await wh.db.withSession((s) =>
      queryBreakdown(s, sessionClassesRelation(sessionClassFiles(snapshotFiles(snap.dir), ['acme'])), {
        window: '30d',
        streamId: null,
        by: 'device',
        filters: new Map([['region', { keep: [], drop: ['eu-west'] }]]),
      }),
    );
    expect(outcome!.rows).toBe(rows.length);
    const { streamId: _s, ...first } = rows[0]!;
    for (const [k, v] of Object.entries(first)) {
      const theirs = outcome!.first![k];
      if (typeof v === 'number') expect(Number(theirs), k).toBeCloseTo(v, 9);
      else expect(theirs, k).toEqual(v);
    }
  });
});

describe('analyst catalog over files of several schemas', () => {
  it('reads the files of each schema together and holds exactly the deduplicated reports up to asOf', async () => {
    const w = await openTestWarehouse();
    try {
      const start = new Date('2026-11-20T00:00:00Z');
      await generateReports(w.db, w.layout, { customers: ['acme'], streams: 2, sessions: 20, start, hours: 3, seed: 11 });
      // An older SDK's file: no region, no bytesUploaded (read as 0); one report repeats a generated one.
      const [dup] = (await w.db.withSession((s) =>
        s.all(`SELECT reportId, sessionId, streamId, strftime(ts, '%Y-%m-%dT%H:%M:%S.%fZ') AS ts FROM read_parquet(${quotedString(path.join(w.layout.rawReports, '*', '*', '*.parquet'))}) ORDER BY reportId LIMIT 1`),
      )) as { reportId: string; sessionId: string; streamId: string; ts: string }[];
      await writeReportsParquet(
        w.db,
        landingPath(w.root, 'acme', '2026-11-20', 'old-sdk.parquet'),
        [
          { reportId: 'old-1', sessionId: 'old-s', streamId: 'acme:old', ts: '2026-11-20T01:00:00Z', bytesOffloaded: 10 },
          { reportId: 'old-2', sessionId: 'old-s', streamId: 'acme:old', ts: '2026-11-20T01:00:30Z', bytesOffloaded: 20 },
          { reportId: 'late', sessionId: 'old-s', streamId: 'acme:old', ts: '2026-11-20T05:00:00Z', bytesOffloaded: 40 },
          { ...dup!, bytesOffloaded: 1 },
        ],
        ['region', 'bytesUploaded'],
      );
      const asOf = new Date('2026-11-20T03:00:00Z');
      const r = await runPipeline(w, { asOf });
      const schemas = new Set(r.manifest.partitions.flatMap((p) => p.files.map((f) => f.schema)));
      expect(schemas.size).toBe(2);
      expect(schemas.has(undefined)).toBe(false);

      // Independently: every raw file read by name, one row per reportId, ts <= asOf.
      const glob = quotedString(path.join(w.layout.rawReports, '*', '*', '*.parquet'));
      const [want] = (await w.db.withSession((s) =>
        s.all(`SELECT count(DISTINCT reportId) AS n, count(DISTINCT reportId) FILTER (WHERE region IS NULL) AS no_region,
                      count(DISTINCT reportId) FILTER (WHERE streamId = 'acme:old') AS old
               FROM read_parquet(${glob}, union_by_name = true) WHERE ts <= TIMESTAMP '2026-11-20 03:00:00' AND reportId <> ${quotedString(dup!.reportId)}`),
      )) as { n: number; no_region: number; old: number }[];
      const catalogOf = w.layout.catalog;
      const { stdout } = await run(
        process.execPath,
        fixtureArgv(
          'query-catalog.ts',
          catalogOf,
          JSON.stringify([
            `SELECT count(*) AS n, count(DISTINCT reportId) AS ids, count(*) FILTER (WHERE region IS NULL) AS no_region,
                    sum(bytesUploaded) FILTER (WHERE streamId = 'acme:old') AS old_uploaded, count(*) FILTER (WHERE streamId = 'acme:old') AS old,
                    count(*) FILTER (WHERE reportId = ${quotedString(dup!.reportId)}) AS dup_copies
             FROM session_reports`,
          ]),
        ),
        { cwd: os.tmpdir() },
      );
      const got = (JSON.parse(stdout.trim()) as Outcome).first!;
      // The duplicated report counts once, its copy of the generated file kept (the first file by
      // name: gen-… before old-sdk…, which has no region); the late one is after asOf.
      expect(got).toEqual({
        n: String(want!.n + 1),
        ids: String(want!.n + 1),
        no_region: String(want!.no_region),
        old_uploaded: '0',
        old: '2',
        dup_copies: '1',
      });
      expect([want!.old, want!.no_region]).toEqual([2, 2]);
    } finally {
      await w.close();
    }
  });
});
