// Publishing a distributed run exactly once (the job functions alone, real DuckDB and files, no
// Redis): a publish job delivered again after it published reports the same snapshot instead of
// failing or publishing twice; a re-run of the same asOf publishes identical figures; half-written
// files of a killed partition attempt never reach a snapshot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { planRollup } from '../../jobs/rollup/plan.ts';
import { rollupPartition } from '../../jobs/rollup/partition.ts';
import { BuildGoneError, publishRollupOnce } from '../../jobs/rollup/publish-once.ts';
import type { PublishInput } from '../../jobs/rollup/publish.ts';
import { buildDir, publishedDir, readHistory, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import { listFiles } from '../../lib/fsx.ts';
import { rollupRunId } from '../../jobs/queue/names.ts';
import { capturedLog } from '../helpers/captured-log.ts';

const START = new Date('2026-11-20T00:00:00Z');
const AS_OF = new Date('2026-11-20T02:00:00Z');
const RUN_ID = rollupRunId(AS_OF);

let wh: TestWarehouse;

/** What the plan job and the partition jobs of a flow do, in this process. */
async function planAndPartitions(): Promise<PublishInput> {
  const startedAt = Date.now();
  const plan = await planRollup(wh, { runId: RUN_ID, asOf: AS_OF, ownerPid: null });
  for (const b of plan.batches) await rollupPartition(wh, { runId: RUN_ID, asOf: AS_OF, partitions: b.partitions });
  return { runId: RUN_ID, asOf: AS_OF, customers: plan.customers, misplaced: plan.misplaced, decisions: plan.decisions, startedAt };
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  await generateReports(wh.db, wh.layout, { customers: ['acme', 'globex'], streams: 2, sessions: 30, start: START, hours: 3, seed: 8 });
}, 60_000);

afterAll(async () => {
  await wh?.close();
});

describe('publishing a distributed run once', () => {
  let first: string;

  it('publishes, and a second delivery of the same publish job reports that snapshot without publishing again', async () => {
    const input = await planAndPartitions();
    // An earlier attempt of the publish step killed mid-write leaves a temporary file beside its output.
    const stray = `${snapshotFiles(buildDir(wh.layout, RUN_ID)).summaries('acme')}.tmp-deadbeef`;
    await fs.mkdir(path.dirname(stray), { recursive: true });
    await fs.writeFile(stray, 'half a parquet file');

    const a = await publishRollupOnce(wh, input);
    expect(a).toMatchObject({ published: true, alreadyPublished: false });
    first = a.manifest!.snapshot;
    const history = await readHistory(wh.layout);
    expect(history.at(-1)).toBe(first);
    const files = await listFiles(publishedDir(wh.layout, first), '');
    expect(files.filter((f) => f.includes('.tmp-'))).toEqual([]);

    const b = await publishRollupOnce(wh, input);
    expect(b).toMatchObject({ published: true, alreadyPublished: true });
    expect(b.manifest!.snapshot).toBe(first);
    expect(await readHistory(wh.layout)).toEqual(history);
  });

  it('a re-run of the same asOf publishes a new snapshot with identical figures', async () => {
    const input = await planAndPartitions();
    const r = await publishRollupOnce(wh, input);
    expect(r).toMatchObject({ published: true, alreadyPublished: false });
    expect(r.manifest!.snapshot).not.toBe(first);
    expectSameSnapshotRows(await snapshotRows(wh.db, wh.layout, r.manifest!.snapshot), await snapshotRows(wh.db, wh.layout, first));
  });

  it('a run discarded for a later asOf logs that it was discarded, never that it published', async () => {
    const input = await planAndPartitions();
    const { log, lines } = capturedLog();
    const earlier = { ...input, asOf: new Date(AS_OF.getTime() - 60_000) };
    const r = await publishRollupOnce({ ...wh, log }, earlier);
    expect(r).toMatchObject({ published: false, alreadyPublished: false });
    expect(lines.map((l) => l['msg'])).toContain('snapshot discarded: a snapshot with a later asOf is current');
    expect(lines.filter((l) => String(l['msg']).includes('published'))).toEqual([]);
  });

  it('refuses when the build folder vanished and this run never published', async () => {
    const input = await planAndPartitions();
    await fs.rm(buildDir(wh.layout, RUN_ID), { recursive: true });
    // Earlier runs of this asOf published, but before this one started: they are not its work.
    await expect(publishRollupOnce(wh, { ...input, startedAt: Date.now() + 120_000 })).rejects.toThrow(BuildGoneError);
    expect(await fs.readdir(wh.layout.snapshots)).not.toContain(path.basename(buildDir(wh.layout, RUN_ID)));
  });
});
