// Compaction of small landed files, as a property: random small files (copies of a report inside
// one file and across files, with different content under the same reportId, so that the kept copy
// matters; late files into older dates; names that sort anywhere, before and after the compacted
// files'), compactions at random moments, in this process and in a child SIGKILLed at each kind of
// step. After every step, the figures (every row of the snapshot), the exports and the analyst
// catalog equal a from-scratch run over the original files, and the published snapshot still reads
// every file it lists.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { DuckDBInstance, TIMESTAMP } from '@duckdb/node-api';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { landingPath, writeReportsParquet, type HandReport } from '../helpers/reports.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { seededRandom } from '../helpers/random.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { runCompaction } from '../../jobs/compaction/compact.ts';
import { readRecordsSync } from '../../warehouse/landing/compaction-records.ts';
import type { CompactionStep } from '../../warehouse/compaction/merge.ts';
import { discoverLanding } from '../../warehouse/landing/landed-files.ts';
import { loadSnapshot } from '../../served/snapshot-store.ts';
import { ResponseCache } from '../../served/response-cache.ts';
import { EXPORT_SLICE_BYTES, startExport } from '../../api/export/export.ts';
import { REPORT_COLUMNS } from '../../warehouse/session-reports/columns.ts';
import { listFiles } from '../../lib/fsx.ts';
import { fileList, quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { timestampParam } from '../../warehouse/duckdb/param-values.ts';
import { fixtureArgv } from '../helpers/fixtures.ts';

/** Grace 0 and two snapshots kept: covered files are removed as soon as no snapshot lists them. */
const SETTINGS = { SNAPSHOT_DEBRIS_GRACE_SECONDS: '0', SNAPSHOT_KEEP: '2', COMPACTION_MIN_FILES: '4' };
const CUSTOMERS = ['acme', 'globex'];
const DATES = ['2026-11-19', '2026-11-20', '2026-11-21'];
const STREAMS = CUSTOMERS.flatMap((c) => [`${c}:s0`, `${c}:s1`]);
// Ten steps reach every case the end of the first test requires (each kind of step killed,
// copies whose kept one a ranking by file names would change, retired files); seven did not once
// compaction took only files that layered states had read.
const STEPS = 10;
const KILL_STEPS: CompactionStep[] = ['merged', 'recorded', 'placed', 'retired'];

let live: TestWarehouse;
let ref: TestWarehouse;

beforeAll(async () => {
  live = await openTestWarehouse(SETTINGS);
  ref = await openTestWarehouse();
});

afterAll(async () => {
  await live?.close();
  await ref?.close();
});

/** Random small files of session reports, each landed alike in both warehouses. */
class Landings {
  private n = 0;
  private readonly landed = new Map<string, HandReport[]>();
  constructor(private readonly random: () => number) {}

  private int(max: number): number {
    return Math.floor(this.random() * max);
  }

  private pick<T>(list: readonly T[]): T {
    return list[this.int(list.length)]!;
  }

  private hex(): string {
    return Array.from({ length: 8 }, () => this.int(16).toString(16)).join('');
  }

  /** A name that sorts anywhere: before, between and after the collector's, the generator's and the compacted files'. */
  private name(): string {
    const h = this.hex();
    return this.pick([`ingest-${h}-0-${this.int(9)}-0.parquet`, `gen-${h}.parquet`, `zz-${h}.parquet`, `0-${h}.parquet`, `compacted-${h}.parquet`, `d-${h}.parquet`]);
  }

  private fresh(customerId: string, date: string): HandReport {
    const streamId = `${customerId}:s${this.int(2)}`;
    return {
      reportId: `r${this.n++}`,
      sessionId: `${streamId}-${this.int(4)}`,
      streamId,
      ts: new Date(Date.parse(`${date}T00:00:00Z`) + this.int(86_400_000)).toISOString(),
      ...this.content(),
    };
  }

  /** The content of a report that its copies need not share (only reportId, streamId and ts). */
  private content(): Partial<HandReport> {
    return {
      seq: this.int(20),
      final: this.random() < 0.1,
      bytesOffloaded: this.int(5_000_000),
      bytesFallback: this.int(5_000_000),
      peerCount: this.random() < 0.1 ? null : this.int(9),
      bufferHealth: this.random() < 0.1 ? null : this.int(30_000) / 1000,
      stallCount: this.int(3),
      region: this.pick(['eu-west', 'us-east', 'ap-south']),
      cohort: this.random() < 0.2 ? 'control' : 'p2p',
    };
  }

  private copy(r: HandReport): HandReport {
    const sessionId = this.random() < 0.3 ? `${r.streamId}-${this.int(4)}` : r.sessionId;
    return { ...r, ...this.content(), sessionId };
  }

  /** One small file into (customer, date): new reports, copies of landed ones, copies of its own rows. */
  async land(customerId: string, date: string): Promise<void> {
    const key = `${customerId}/${date}`;
    const before = this.landed.get(key) ?? [];
    const rows: HandReport[] = [];
    for (let i = 0, n = 3 + this.int(15); i < n; i++) {
      const x = this.random();
      if (x < 0.25 && before.length > 0) rows.push(this.copy(this.pick(before)));
      else if (x < 0.35 && rows.length > 0) rows.push(this.copy(this.pick(rows)));
      else rows.push(this.fresh(customerId, date));
    }
    this.landed.set(key, [...before, ...rows]);
    const name = this.name();
    const omit = this.random() < 0.2 ? ['region', 'bytesUploaded'] : [];
    const file = landingPath(ref.root, customerId, date, name);
    await writeReportsParquet(ref.db, file, rows, omit);
    const to = landingPath(live.root, customerId, date, name);
    await fs.mkdir(path.dirname(to), { recursive: true });
    await fs.copyFile(file, to);
  }

  /** A file of the step's date, or a late one into an older date. */
  async landOne(step: number): Promise<void> {
    const current = Math.min(DATES.length - 1, Math.floor((step * DATES.length) / STEPS));
    const date = this.random() < 0.25 ? DATES[this.int(current + 1)]! : DATES[current]!;
    await this.land(this.pick(CUSTOMERS), date);
  }
}

/** A compaction in a child process that SIGKILLs itself at its `nth` step `step`; whether it was killed. */
async function killedCompaction(step: CompactionStep, nth: number, force: boolean): Promise<boolean> {
  const child = spawn(
    process.execPath,
    fixtureArgv('compact-run.ts', live.root, JSON.stringify(SETTINGS), step, String(nth), force ? 'force' : ''),
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
  if (signal === 'SIGKILL') return true;
  expect(out, 'a compaction that was not killed finished').toContain('DONE');
  return false;
}

/**
 * Reports with ts <= asOf whose kept copy, among the files a run reads now, would be another if
 * copies were ranked by the names of the files they lie in: the cases where the rule matters.
 */
async function rankedByNameAlone(asOf: Date): Promise<number> {
  const files = (await discoverLanding(live.layout)).files;
  if (!files.some((f) => f.relPath.includes('/compacted-2'))) return 0;
  const [row] = await live.db.withSession((s) =>
    s.all<{ n: number }>(
      `WITH r AS (
         SELECT row_number() OVER (PARTITION BY reportId ORDER BY filename, file_row_number) AS by_name,
                row_number() OVER (PARTITION BY reportId ORDER BY coalesce(_source_file, parse_filename(filename)), coalesce(_source_row, file_row_number)) AS by_rule
         FROM read_parquet(${fileList(files.map((f) => f.path))}, union_by_name = true, filename = true, file_row_number = true)
         WHERE ts <= $as_of
       )
       SELECT count(*)::INTEGER AS n FROM r WHERE by_name = 1 AND by_rule <> 1`,
      { as_of: timestampParam(asOf) },
      { as_of: TIMESTAMP },
    ),
  );
  return row!.n;
}

/** Every record's compacted file is in place: a compaction that ran to the end left no record of a file never placed. */
function expectNoPendingRecord(): void {
  for (const [folder, records] of readRecordsSync(live.layout)) {
    for (const r of records) expect(existsSync(path.join(live.layout.rawReports, folder, r.compacted)), `${folder}/${r.compacted}`).toBe(true);
  }
}

/** Each stream's export (every report up to asOf, NDJSON) from a published snapshot, through the API's own export. */
async function exportsOf(wh: TestWarehouse, snapshot: string): Promise<string[]> {
  const snap = await loadSnapshot(wh.db, wh.layout, snapshot, new ResponseCache(1 << 20));
  const out: string[] = [];
  for (const streamId of STREAMS) {
    const body = await startExport(wh.db, wh.layout, snap, streamId, 'all', 'ndjson', {
      signal: new AbortController().signal,
      dayTimeoutMs: 60_000,
      sliceBytes: EXPORT_SLICE_BYTES,
    });
    out.push(await text(body));
  }
  return out;
}

/**
 * The analyst catalog's deduplicated reports and stream metrics, opened read-only as an analyst
 * would (on one thread, as the tests' own DuckDB: a thread a core cost a fifth more CPU time here).
 */
async function catalogOf(wh: TestWarehouse): Promise<Record<string, unknown>[][]> {
  const instance = await DuckDBInstance.create(wh.layout.catalog, { access_mode: 'READ_ONLY', threads: '1' });
  const conn = await instance.connect();
  try {
    const rows = async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
    return [await rows('SELECT * FROM session_reports ORDER BY reportId'), await rows('SELECT * FROM stream_metrics ORDER BY windowName, streamId')];
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

describe('compaction of small landed files', () => {
  it('changes no figure, export or catalog row, whenever it runs and wherever it is killed', async () => {
    const random = seededRandom(20261126);
    const landings = new Landings(random);
    const killed = new Set<CompactionStep>();
    let kills = 0;
    let compacted = 0;
    let retired = 0;
    let mattered = 0;
    let published: { snapshot: string; exports: string[] } | null = null;

    const compactHere = async () => {
      const r = await runCompaction(live, { force: random() < 0.3 });
      expect(r.busy || r.failed > 0).toBe(false);
      compacted += r.compacted.length;
      retired += r.retired.files;
      expectNoPendingRecord();
    };
    // Each kind of step in turn, once, at the first such step of a forced compaction, so that every
    // kind is killed. Later rounds killed a second time at a kind already covered (the same step of
    // another partition), each a child process of about a second of CPU: from the fifth round on,
    // the compaction of that moment runs here to its end (docs/benchmarks.md, 2026-11-28, "CPU
    // time of the test suite, part 2").
    const compactKilled = async () => {
      const round = kills++;
      if (round >= KILL_STEPS.length) return compactHere();
      const step = KILL_STEPS[round]!;
      if (await killedCompaction(step, 1, true)) killed.add(step);
    };

    for (let step = 0; step < STEPS; step++) {
      const what = `step ${step}`;
      // Files land; a compaction may run between two of them, and after them one may be killed.
      const n = 3 + Math.floor(random() * 6);
      const between = random() < 0.5 ? Math.floor(random() * n) : -1;
      for (let i = 0; i < n; i++) {
        if (i === between) await compactHere();
        await landings.landOne(step);
      }
      const x = random();
      if (x < 0.6) await compactKilled();
      if (x < 0.3 || (x >= 0.6 && x < 0.8)) await compactHere();

      // Nothing that the published snapshot lists has gone: its exports are what they were.
      if (published) expect(await exportsOf(live, published.snapshot), `${what}: the published snapshot's exports`).toEqual(published.exports);

      const asOf = new Date(Date.parse('2026-11-21T18:00:00Z') + step * 37 * 60_000);
      const run = await runPipeline(live, { asOf, compact: random() < 0.3 });
      mattered += await rankedByNameAlone(asOf);
      const base = await runPipeline(ref, { asOf, rebuild: true, compact: false });
      compacted += run.compaction?.compacted.length ?? 0;
      retired += run.compaction?.retired.files ?? 0;
      expectSameSnapshotRows(await snapshotRows(live.db, live.layout, run.manifest.snapshot), await snapshotRows(ref.db, ref.layout, base.manifest.snapshot), what);
      expect(run.manifest.rows, what).toEqual(base.manifest.rows);
      const exports = await exportsOf(live, run.manifest.snapshot);
      expect(exports, `${what}: exports`).toEqual(await exportsOf(ref, base.manifest.snapshot));
      const [reports, metrics] = await catalogOf(live);
      expect(Object.keys(reports![0]!), `${what}: catalog columns`).toEqual(REPORT_COLUMNS.map((c) => c.name));
      expect([reports, metrics], `${what}: catalog`).toEqual(await catalogOf(ref));
      published = { snapshot: run.manifest.snapshot, exports };
    }
    expect(compacted).toBeGreaterThan(3);
    expect(mattered, 'copies whose kept one ranking by file names alone would change').toBeGreaterThan(0);
    expect(retired).toBeGreaterThan(0);
    expect([...killed].sort()).toEqual([...KILL_STEPS].sort());
  }, 600_000);

  it('leaves a file that breaks the contract to the run, which quarantines it', async () => {
    const date = '2026-11-22';
    const good = (id: string): HandReport => ({ reportId: id, sessionId: 's', streamId: 'acme:s0', ts: `${date}T01:00:00Z`, bytesOffloaded: 5 });
    for (const name of ['a.parquet', 'b.parquet']) await writeReportsParquet(live.db, landingPath(live.root, 'acme', date, name), [good(name)]);
    const plain = landingPath(live.root, 'acme', date, 'poisoned.plain');
    await writeReportsParquet(live.db, plain, [good('bad')]);
    await live.db.withSession((s) =>
      s.run(`COPY (SELECT * REPLACE ('NaN'::DOUBLE AS bufferHealth) FROM read_parquet(${quotedString(plain)})) TO ${quotedString(landingPath(live.root, 'acme', date, 'poisoned.parquet'))} (FORMAT parquet)`),
    );
    await fs.rm(plain);
    const r = await runCompaction(live, { date, force: true });
    expect(r.compacted.map((c) => c.files)).toEqual([2]);
    const run = await runPipeline(live, { asOf: new Date(`${date}T12:00:00Z`), compact: false });
    expect(run.manifest.quarantined.map((q) => q.relPath)).toEqual([`customer=acme/date=${date}/poisoned.parquet`]);
    const day = run.manifest.partitions.flatMap((p) => p.files.map((f) => f.path)).filter((f) => f.includes(date));
    expect(day).toEqual([r.compacted[0]!.relPath]);
    await fs.rm(path.join(live.layout.rawReports, `customer=acme/date=${date}`), { recursive: true });
  });

  it('leaves one file per partition once forced, and the covered files go once no snapshot reads them', async () => {
    const asOf = new Date('2026-11-22T12:00:00Z');
    await runCompaction(live, { force: true });
    // Two more snapshots (SNAPSHOT_KEEP) that read the compacted files only.
    await runPipeline(live, { asOf, compact: false });
    const run = await runPipeline(live, { asOf, compact: false });
    expect(run.manifest.inputs.files).toBe(run.manifest.partitions.reduce((a, p) => a + (p.states?.length ?? 0), 0));
    const r = await runCompaction(live, {});
    expect(r.compacted).toEqual([]);
    const landed = await listFiles(live.layout.rawReports, '.parquet');
    expect(landed.length).toBe((await discoverLanding(live.layout)).files.length);
    expect(readRecordsSync(live.layout).size).toBe(0);
    const base = await runPipeline(ref, { asOf, rebuild: true, compact: false });
    expectSameSnapshotRows(await snapshotRows(live.db, live.layout, run.manifest.snapshot), await snapshotRows(ref.db, ref.layout, base.manifest.snapshot));
    expect(await exportsOf(live, run.manifest.snapshot)).toEqual(await exportsOf(ref, base.manifest.snapshot));
    expect(await catalogOf(live)).toEqual(await catalogOf(ref));
  }, 120_000);
});
