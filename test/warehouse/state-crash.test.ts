// Crash safety of partition states: a run killed (SIGKILL) while it builds a partition's state,
// or while it combines states into the snapshot, leaves the published snapshot and the reusable
// states consistent: the next run succeeds, never reuses a half-built state, and publishes
// exactly what a from-scratch run publishes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { readStates } from '../../warehouse/states/state-store.ts';
import { listFiles } from '../../lib/fsx.ts';
import { fixtureArgv } from '../helpers/fixtures.ts';

const START = new Date('2026-11-16T00:00:00Z');
const at = (h: number) => new Date(START.getTime() + h * 3_600_000);

let wh: TestWarehouse;

/** Run the pipeline in a child and SIGKILL it as soon as `seen()` holds. */
async function killWhen(asOf: Date, seen: () => Promise<boolean>): Promise<void> {
  // A half-built state waits 2 s before its rename: a fast run would otherwise leave no time to see it.
  const child = spawn(
    process.execPath,
    fixtureArgv('pipeline-run.ts', wh.root, asOf.toISOString()),
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOLD_TMP_MS: '2000' } },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let done = false;
  void exited.then(() => (done = true));
  while (!done && !(await seen())) await new Promise((r) => setTimeout(r, 2));
  expect(done, `the run finished before the step was seen: ${stdout} ${stderr}`).toBe(false);
  child.kill('SIGKILL');
  await exited;
  expect(stdout).not.toContain('DONE');
}

const tmpStates = async () => (await listFiles(wh.layout.state, '')).some((f) => f.includes(`${path.sep}.tmp-`));
const combining = async () =>
  (await fs.readdir(wh.layout.snapshots).catch(() => [] as string[])).some((n) => n.startsWith('.build-')) &&
  (await listFiles(wh.layout.snapshots, '.parquet')).some((f) => f.includes(`${path.sep}.build-`) && f.includes('stream_summaries'));

beforeAll(async () => {
  wh = await openTestWarehouse({ SNAPSHOT_DEBRIS_GRACE_SECONDS: '0' });
  await generateReports(wh.db, wh.layout, { customers: ['acme', 'globex', 'initech'], streams: 2, sessions: 60, start: START, hours: 96, seed: 21 });
}, 120_000);

afterAll(async () => {
  await wh?.close();
});

async function expectNextRunEqualsFromScratch(asOf: Date): Promise<void> {
  const before = await readCurrent(wh.layout);
  const next = await runPipeline(wh, { asOf });
  expect(next.published).toBe(true);
  expect((await readCurrent(wh.layout))!.snapshot).not.toBe(before?.snapshot);
  const scratch = await runPipeline(wh, { asOf, rebuild: true });
  expectSameSnapshotRows(await snapshotRows(wh.db, wh.layout, next.manifest.snapshot), await snapshotRows(wh.db, wh.layout, scratch.manifest.snapshot));
  expect(next.manifest.rows).toEqual(scratch.manifest.rows);
  // No half-built state is left, and every state has its files.
  expect(await tmpStates()).toBe(false);
  for (const list of (await readStates(wh.layout)).values()) {
    for (const m of list) {
      // A state built whole has its hour pieces; a layered one (recent days) each layer's files
      // and its coarse buckets' sums.
      const own = m.layers
        ? [...m.layers.flatMap((l) => ['hours', 'minutes', 'reports', 'sessions'].map((k) => `layer-${l.layerId}-${k}.parquet`)), 'coarse.parquet']
        : ['hours.parquet'];
      const held = m.pending ? ['pending.parquet'] : [];
      expect((await fs.readdir(path.join(wh.layout.state, `customer=${m.customerId}`, `date=${m.date}`, m.stateId))).sort()).toEqual([...own, ...held, 'meta.json', 'series.parquet'].sort());
    }
  }
}

describe('a run killed with SIGKILL', () => {
  it('while building a partition state: the next run succeeds and equals a from-scratch run', async () => {
    await killWhen(at(90), tmpStates);
    expect(await tmpStates()).toBe(true);
    await expectNextRunEqualsFromScratch(at(90));
  }, 180_000);

  it('while combining states into the snapshot: the published snapshot is untouched, the next run equals a from-scratch run', async () => {
    const published = await readCurrent(wh.layout);
    // A later asOf: every state is reused, only the combine runs.
    await killWhen(at(95), combining);
    expect(await readCurrent(wh.layout)).toEqual(published);
    await expectNextRunEqualsFromScratch(at(95));
  }, 180_000);
});
