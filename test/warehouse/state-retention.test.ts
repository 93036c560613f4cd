// Retention of partition states: a state superseded by a rebuild is kept through the grace time
// (a run in flight may still read it) and removed by the first run after it. A run with nothing
// rebuilt and nothing old enough to remove does not walk the states at all (its plan says so).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { planRollup } from '../../jobs/rollup/plan.ts';
import { readStates } from '../../warehouse/states/state-store.ts';
import { newSnapshotId, publishedDir, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import type { JobDeps } from '../../jobs/deps.ts';

const BASE = new Date('2026-11-18T08:00:00Z');
const at = (minutes: number) => new Date(BASE.getTime() + minutes * 60_000);

let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse({ SNAPSHOT_DEBRIS_GRACE_SECONDS: '3600' });
  await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 1, sessions: 4, start: BASE, hours: 2, seed: 1 });
}, 60_000);

afterAll(async () => {
  await wh?.close();
});

/** The same warehouse seen by a process whose grace times (debris, superseded states) are `seconds`. */
const withGrace = (seconds: number): JobDeps => ({
  ...wh,
  config: { ...wh.config, snapshots: { ...wh.config.snapshots, debrisGraceMs: seconds * 1000, stateSupersededGraceMs: seconds * 1000 } },
});

const statesOf = async () => [...(await readStates(wh.layout)).values()].map((l) => l.length);

/** The class units' session class files in the state area (class-units.ts). */
const stateFiles = async (prefix: string) => (await fs.readdir(path.join(wh.layout.state, 'customer=acme'))).filter((n) => n.startsWith(prefix)).sort();
/** The units' session class files, and the summary bases of settled ones (summary-bases.ts). */
const classFiles = async () => (await stateFiles('classes-')).filter((n) => !n.startsWith('classes-summary-'));
const baseFiles = () => stateFiles('classes-summary-');

describe('state retention', () => {
  it('keeps a superseded state through the grace time, without looking, and removes it after', async () => {
    await runPipeline(wh, { asOf: at(180) });
    expect(await statesOf()).toEqual([1]);

    // A late file into the same day: its partition is rebuilt, the old state superseded.
    await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 1, sessions: 2, start: BASE, hours: 1, seed: 2 });
    const rebuilt = await runPipeline(wh, { asOf: at(185) });
    expect(rebuilt.manifest.partitionStates!.rebuilt).toBe(1);
    expect(await statesOf()).toEqual([2]);

    // Within the grace time: nothing to rebuild and nothing old enough, so no pruning walk.
    const quiet = await planRollup(wh, { runId: newSnapshotId(at(190)), asOf: at(190), ownerPid: null });
    expect(quiet.batches).toEqual([]);
    expect(quiet.pruneNeeded).toBe(false);
    await runPipeline(wh, { asOf: at(190) });
    expect(await statesOf()).toEqual([2]);

    // Past the grace time (seen here as a process whose grace is 0): the plan asks for pruning,
    // and the run removes the superseded state, keeping the one it uses.
    const later = await planRollup(withGrace(0), { runId: newSnapshotId(at(195)), asOf: at(195), ownerPid: null });
    expect(later.pruneNeeded).toBe(true);
    const run = await runPipeline(withGrace(0), { asOf: at(195) });
    expect(await statesOf()).toEqual([1]);
    const kept = [...(await readStates(wh.layout)).values()][0]![0]!;
    expect(run.manifest.partitions[0]!.states?.[0]?.stateId).toBe(kept.stateId);
  }, 120_000);

  it('removes the session classes of class units that the run did not use once past the superseded grace', async () => {
    // The next day, the 24h window's edge in the hours of the day's reports (08:00–10:00); with
    // no grace, the run removes the classes of the earlier runs' units, which it does not use.
    const noGrace = { ...wh, config: { ...wh.config, snapshots: { ...wh.config.snapshots, stateSupersededGraceMs: 0 } } };
    const first = await runPipeline(noGrace, { asOf: at(24 * 60 + 20) });
    const before = await classFiles();
    expect(before.length).toBe(first.manifest.combine!.classUnitsLinked);
    const basesBefore = await baseFiles();
    expect(basesBefore.length).toBe(1);
    // An hour later nothing is rebuilt, but the edge lies in another hour of the day: its unit's
    // classes are new. The run computes them and, past the superseded grace, removes the ones it
    // replaced while the snapshots keep their links.
    const later = await runPipeline(noGrace, { asOf: at(24 * 60 + 80) });
    expect(later.manifest.partitionStates!.rebuilt).toBe(0);
    expect(later.manifest.combine!.classUnitsComputed).toBeGreaterThan(0);
    const after = await classFiles();
    expect(after.filter((f) => before.includes(f))).toEqual([]);
    expect(after.length).toBe(later.manifest.combine!.classUnitsLinked);
    // The settled classes changed with the edge, so did their summary base: the old one is gone.
    const basesAfter = await baseFiles();
    expect(basesAfter.length).toBe(1);
    expect(basesAfter).not.toEqual(basesBefore);
    const kept = await fs.readdir(path.join(snapshotFiles(publishedDir(wh.layout, first.manifest.snapshot)).dir, 'session_classes', 'customer=acme'));
    expect(kept.length).toBe(before.length + 1);
  }, 120_000);
});
