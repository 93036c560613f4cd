// One contract in both places: any report the collector acknowledges lands in a file that passes
// the warehouse's schema and row rules (warehouse/landing/landed-files.ts, validate-rows.ts), for random values
// at and around every bound of every column of the catalog. And a post mixing good reports with one
// out of contract (a byte counter the warehouse would quarantine a file for) is answered 202 listing
// that one, and `pipeline` counts the good ones: one value no longer poisons a whole file.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkBatchSync } from '../../collector/batch.ts';
import { Spool } from '../../collector/spool.ts';
import { Flusher } from '../../collector/flusher.ts';
import { MAX_MAP_ENTRIES, MAX_TEXT_LENGTH } from '../../collector/session-report-schema.ts';
import { checkSchemas } from '../../warehouse/landing/landed-files.ts';
import { validateRows } from '../../warehouse/landing/validate-rows.ts';
import { REPORT_COLUMNS, type ReportColumn } from '../../warehouse/session-reports/columns.ts';
import { fileList } from '../../warehouse/duckdb/sql-text.ts';
import { listFiles } from '../../lib/fsx.ts';
import { silentLogger } from '../../lib/log.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { sampleReport, startTestCollector } from '../helpers/collector.ts';
import { seededRandom } from '../helpers/random.ts';

const NOW = Date.now();
const DAY = 86_400_000;
const WINDOW = { latestMs: NOW + 600_000, earliestMs: NOW - 35 * DAY };

const random = seededRandom;

/** Numbers at and around a bound: below, at, just above (as a double), one above, far above. */
function around(max: number): number[] {
  const up = (x: number) => x + Math.max(Number.EPSILON * Math.abs(x), Number.MIN_VALUE);
  return [max - 1, max - 0.5, max, up(max), max + 0.5, max + 1, max * 2, 2 ** 53 - 1, 2 ** 53, 1e300];
}
const LOW = [0, -0, -1e-300, -0.5, -1, 0.5, 1, 1.5, 2 ** 31 - 1, 2 ** 31, 2 ** 32];

/** Values to try for a column: its bounds' neighbourhoods, wrong types, odd text. */
function candidates(col: ReportColumn): unknown[] {
  const common: unknown[] = [null, true, 'x', [], {}, -1];
  switch (col.family) {
    case 'integer':
    case 'float':
      return [...common, ...LOW, ...around(col.max!)];
    case 'map': {
      const values = [...LOW, ...around(col.max!)];
      return [
        ...common,
        ...values.map((v) => ({ no_peers: v })),
        ...values.map((v) => ({ a: 1, ['k'.repeat(64)]: v })),
        { ['k'.repeat(65)]: 1 },
        { '': 1 },
        Object.fromEntries(Array.from({ length: MAX_MAP_ENTRIES }, (_, i) => [`k${i}`, col.max!])),
        Object.fromEntries(Array.from({ length: MAX_MAP_ENTRIES + 1 }, (_, i) => [`k${i}`, 1])),
      ];
    }
    case 'string':
      return [...common, '', 'a', 'a'.repeat(MAX_TEXT_LENGTH), 'a'.repeat(MAX_TEXT_LENGTH + 1), 'lone \ud800', 'emoji 😀', 'nul \u0000', 'acme:live-main', 'acme:other.stream~1', 'acme:', ':x', 'p2p', 'control', 'live', 'vod', 'hybrid', 'cdn', 'tv', 'mobile'];
    case 'boolean':
      return [...common, true, false, 0, 'true'];
    case 'timestamp':
      return [
        ...common,
        new Date(NOW - 60_000).toISOString(),
        new Date(WINDOW.earliestMs + 60_000).toISOString(),
        new Date(WINDOW.earliestMs - 1).toISOString(),
        new Date(WINDOW.latestMs - 1).toISOString(),
        new Date(WINDOW.latestMs + 1).toISOString(),
        NOW - 1000,
        NOW - 0.0005,
        WINDOW.latestMs + 1,
        '2026-02-30T00:00:00Z',
        'not a date',
      ];
  }
}

const CANDIDATES = REPORT_COLUMNS.map((col) => ({ col, values: candidates(col) }));

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

describe('the collector and the warehouse share one contract', () => {
  it('every report the collector acknowledges passes the warehouse row rules (random values at every bound)', async () => {
    const wh: TestWarehouse = await openTestWarehouse();
    cleanups.push(() => wh.close());
    const next = random(20261126);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    const reports: Record<string, unknown>[] = [];
    for (let i = 0; i < 1500; i++) {
      const r = sampleReport('acme:live-main', new Date(NOW - 60_000 - i), i, { reportId: `c-${i}` });
      // One to three columns changed; reportId stays unique so landed rows can be matched.
      const changes = 1 + Math.floor(next() * 3);
      for (let k = 0; k < changes; k++) {
        const { col, values } = pick(CANDIDATES);
        if (col.name === 'reportId') continue;
        const v = pick(values);
        if (col.name === 'streamId' && typeof v === 'string' && v.includes(':') && !v.startsWith('acme:')) continue; // a foreign stream refuses the whole batch
        r[col.name] = v;
      }
      reports.push(r);
    }

    const spool = await Spool.open(path.join(wh.root, 'spool', 'contract'), silentLogger);
    const flusher = new Flusher(spool, wh.db, wh.layout, { intervalMs: 3_600_000, reports: 1_000_000 }, silentLogger);
    let accepted = 0;
    let rejected = 0;
    for (let from = 0; from < reports.length; from += 500) {
      const outcome = checkBatchSync(Buffer.from(JSON.stringify(reports.slice(from, from + 500))), { gzip: false, ndjson: false, customerId: 'acme', window: WINDOW }, { maxInflatedBytes: 2 ** 24, maxReports: 2000 });
      expect(outcome.ok).toBe(true);
      if (!outcome.ok) return;
      accepted += outcome.accepted;
      rejected += outcome.rejected.length;
      await spool.append(Buffer.from(outcome.lines), outcome.accepted);
    }
    await flusher.flushAll();
    await spool.close();
    // Both verdicts happen: the cases reach both sides of the bounds.
    expect(accepted).toBeGreaterThan(100);
    expect(rejected).toBeGreaterThan(100);

    const files = await listFiles(wh.layout.rawReports, '.parquet');
    const verdicts = await wh.db.withSession(async (s) => {
      const schemas = await checkSchemas(s, files);
      const refused = [...schemas].filter(([, v]) => !v.ok);
      const rows = await validateRows(
        s,
        files.map((f) => {
          const v = schemas.get(f)!;
          return { path: f, columns: v.ok ? v.schema.columns : new Map<string, string>() };
        }),
      );
      const [landed] = await s.all<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM read_parquet(${fileList(files)}, hive_partitioning = false)`);
      return { refused, rows: [...rows], landed: landed!.n };
    });
    expect(verdicts.refused).toEqual([]);
    expect(verdicts.rows).toEqual([]);
    expect(verdicts.landed).toBe(accepted);
  }, 120_000);

  it('a post with one out-of-contract report among good ones: 202 listing it, and pipeline counts the good ones', async () => {
    const c = await startTestCollector();
    cleanups.push(() => c.close());
    const ts = new Date(NOW - 120_000);
    const good = Array.from({ length: 5 }, (_, i) => sampleReport('acme:live-main', ts, i, { reportId: `good-${i}`, sessionId: `s-${i}` }));
    const poisoned = sampleReport('acme:live-main', ts, 9, { reportId: 'poison', sessionId: 's-9', bytesOffloaded: 9007199254740991 });
    const deep = sampleReport('acme:live-main', ts, 10, { reportId: 'buffer', sessionId: 's-10', bufferHealth: 86_400.5 });
    const res = await c.post(JSON.stringify({ reports: [...good.slice(0, 3), poisoned, deep, ...good.slice(3)] }));
    expect(res.status).toBe(202);
    expect(res.json).toEqual({
      accepted: 5,
      rejected: [
        { index: 3, field: 'bytesOffloaded', reason: 'must be at most 1000000000000' },
        { index: 4, field: 'bufferHealth', reason: 'must be at most 86400' },
      ],
    });
    await c.collector.flush();
    const landed = await c.landed();
    expect(landed.map((r) => r.reportId).sort()).toEqual(good.map((r) => r['reportId']).sort());
    const result = await runPipeline(c.wh, { asOf: new Date(NOW) });
    expect(result.manifest.quarantined).toEqual([]);
    expect(result.manifest.rows.reports).toBe(5);
    expect(await fs.readdir(c.wh.layout.quarantine).catch(() => [])).toEqual([]);
  }, 120_000);
});
