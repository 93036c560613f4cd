// The incremental warehouse, as a property: random sequences of landings (files in random order,
// late files into old dates, duplicates across files and inside one file, a file to quarantine,
// asOf moving forward, on and off minute boundaries, reruns at the same asOf). After every run
// the published snapshot equals a from-scratch run (`--rebuild`) over the same files, row for row
// and value for value, and equals the independent SQL over the raw files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameSnapshotRows, snapshotRows, type SnapshotRows } from '../helpers/snapshot-rows.ts';
import { expectSnapshotMatchesIndependent } from '../helpers/figures-check.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline, type PipelineResult } from '../../jobs/pipeline.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { listFiles } from '../../lib/fsx.ts';
import { readStates } from '../../warehouse/states/state-store.ts';
import { seededRandom } from '../helpers/random.ts';

const BASE = new Date('2026-11-18T20:00:00Z');
const HOUR = 3_600_000;

const rng = seededRandom;

let pool: TestWarehouse;
let inc: TestWarehouse;
let scratch: TestWarehouse;
let poolFiles: string[];

beforeAll(async () => {
  // DEBRIS grace 0: superseded states are pruned at once, so retention is exercised too.
  pool = await openTestWarehouse();
  inc = await openTestWarehouse({ SNAPSHOT_DEBRIS_GRACE_SECONDS: '0', STATE_SUPERSEDED_GRACE_SECONDS: '0' });
  scratch = await openTestWarehouse();
  // Six generations of reports spread over three days: each lands one file per (customer, date)
  // it touches, plus a file of retried copies.
  for (let g = 0; g < 6; g++) {
    await generateReports(pool.db, pool.layout, {
      customers: ['acme', 'globex'],
      streams: 2,
      sessions: 12,
      start: new Date(BASE.getTime() + g * 9 * HOUR),
      hours: 9,
      seed: 40 + g,
    });
  }
  poolFiles = (await listFiles(pool.layout.rawReports, '.parquet')).map((f) => path.relative(pool.layout.rawReports, f));
}, 120_000);

afterAll(async () => {
  await pool?.close();
  await inc?.close();
  await scratch?.close();
});

async function land(rel: string, as = rel): Promise<void> {
  const to = path.join(inc.layout.rawReports, as);
  await fs.mkdir(path.dirname(to), { recursive: true });
  await fs.copyFile(path.join(pool.layout.rawReports, rel), to);
}

/** A file holding every row of `rel` and its first rows a second time: copies inside one file. */
async function landWithInnerCopies(rel: string, name: string): Promise<void> {
  const to = path.join(inc.layout.rawReports, path.dirname(rel), name);
  const from = quotedString(path.join(pool.layout.rawReports, rel));
  await inc.db.withSession((s) =>
    s.run(`COPY (SELECT * FROM read_parquet(${from}) UNION ALL (SELECT * FROM read_parquet(${from}) LIMIT 5)) TO ${quotedString(to)} (FORMAT parquet)`),
  );
}

/** The from-scratch run: the same landed files in a fresh place, every state rebuilt. */
async function fromScratch(asOf: Date): Promise<PipelineResult> {
  await fs.rm(scratch.layout.rawReports, { recursive: true, force: true });
  await fs.cp(inc.layout.rawReports, scratch.layout.rawReports, { recursive: true });
  return runPipeline(scratch, { asOf, rebuild: true });
}

describe('incremental runs equal from-scratch runs and the independent SQL', () => {
  it('over a random sequence of landings', async () => {
    const random = rng(20261123);
    const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!;
    const pending = [...poolFiles];
    let asOf = new Date(BASE.getTime() + 6 * HOUR);
    let reused = 0;
    let layeredCut = 0;
    let appended = 0;
    let held = 0;
    const reasons = new Set<string>();
    let reference: { asOf: Date; base: PipelineResult; rows: SnapshotRows } | null = null;
    for (let step = 0; step < 8; step++) {
      // Land a random share of the pending files, in random order (late files into old dates).
      // Step 5 lands nothing and reruns at the same asOf.
      const n = step === 5 ? 0 : step === 7 ? pending.length : Math.ceil(pending.length * (0.15 + 0.25 * random()));
      for (let i = 0; i < n && pending.length > 0; i++) {
        const rel = pending.splice(Math.floor(random() * pending.length), 1)[0]!;
        await land(rel);
      }
      if (step === 2) await landWithInnerCopies(pick(poolFiles), 'zz-inner-copies.parquet');
      if (step === 4) {
        // A file whose rows belong to another date than its folder: quarantined, never counted.
        const rel = pick(poolFiles.filter((f) => f.includes('date=2026-11-19')));
        await land(rel, rel.replace('date=2026-11-19', 'date=2026-11-20').replace(/[^/]+$/, 'misfiled.parquet'));
      }
      // asOf moves forward: on an hour, on a minute, or anywhere (a window edge inside a minute).
      if (step !== 5) {
        const next = asOf.getTime() + HOUR * (1 + Math.floor(random() * 14));
        const kind = [2, 0, 2, 1, 2, 0, 1, 2][step]!;
        asOf = new Date(kind === 0 ? next - (next % HOUR) : kind === 1 ? next - (next % 60_000) : next + Math.floor(random() * 59_999));
      }

      const run = await runPipeline(inc, { asOf });
      const what = `step ${step} (asOf ${asOf.toISOString()})`;
      // Step 5's files and asOf are step 4's: its from-scratch run would be step 4's again, which
      // the independent SQL checked, so the rerun is checked against that run's rows.
      const again = step === 5 && reference?.asOf.getTime() === asOf.getTime();
      if (!again) {
        const base = await fromScratch(asOf);
        reference = { asOf, base, rows: await snapshotRows(scratch.db, scratch.layout, base.manifest.snapshot) };
      }
      const { base, rows } = reference!;
      expectSameSnapshotRows(await snapshotRows(inc.db, inc.layout, run.manifest.snapshot), rows, what);
      expect(run.manifest.rows, what).toEqual(base.manifest.rows);
      expect(run.manifest.partitions.map((p) => p.files), what).toEqual(base.manifest.partitions.map((p) => p.files));
      if (!again) await expectSnapshotMatchesIndependent(inc.db, inc.layout, run.manifest.snapshot, what);

      const ps = run.manifest.partitionStates!;
      expect(ps.reused + ps.rebuilt).toBe(run.manifest.partitions.reduce((a, p) => a + (p.states?.length ?? 0), 0));
      reused += ps.reused;
      layeredCut += run.manifest.combine!.layeredStatesCut ?? 0;
      for (const list of (await readStates(inc.layout)).values()) {
        if (list[0]!.made === 'appended' && list[0]!.runId === run.manifest.runId) appended++;
        if (list[0]!.pending) held++;
      }
      for (const r of Object.keys(ps.reasons)) reasons.add(r);
      if (step === 5) expect(ps.rebuilt, 'a rerun with nothing new rebuilds nothing').toBe(0);
      if (step === 4) expect(run.manifest.quarantined.map((q) => q.relPath)).toEqual([expect.stringContaining('misfiled.parquet')]);
    }
    expect(reused).toBeGreaterThan(0);
    expect(reasons).toContain('new files landed');
    // The ways of combining were taken: hours cut by a window edge read from layers' report files
    // (the recent days that the 1h and 24h edges cut are layered once a run has added to them: a
    // day without a state is built whole, as in a full run, and then its cut hours are read from
    // raw files and asOf's day computed up to asOf, as for days built whole); recent days' states
    // were appended to, not only built whole, and held back their reports after asOf.
    expect(layeredCut).toBeGreaterThan(0);
    expect(appended).toBeGreaterThan(0);
    expect(held).toBeGreaterThan(0);
    // Retention: one state per partition is left (grace 0), each built from the files now there.
    const states = await readStates(inc.layout);
    for (const list of states.values()) expect(list).toHaveLength(1);
  }, 600_000);

  it('prunes the state of a partition whose files are all gone, and the figures follow', async () => {
    const gone = path.join(inc.layout.rawReports, 'customer=globex', 'date=2026-11-19');
    expect((await readStates(inc.layout)).has('globex/2026-11-19')).toBe(true);
    await fs.rm(gone, { recursive: true });
    const asOf = new Date('2026-11-21T06:00:00Z');
    const run = await runPipeline(inc, { asOf });
    expect((await readStates(inc.layout)).has('globex/2026-11-19')).toBe(false);
    expect(run.manifest.partitionStates!.rebuilt).toBe(0);
    await expectSnapshotMatchesIndependent(inc.db, inc.layout, run.manifest.snapshot, 'after removing a partition');
    const base = await fromScratch(asOf);
    expectSameSnapshotRows(await snapshotRows(inc.db, inc.layout, run.manifest.snapshot), await snapshotRows(scratch.db, scratch.layout, base.manifest.snapshot));
  }, 120_000);
});
