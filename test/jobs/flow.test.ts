// A rollup run as a BullMQ flow over two worker processes (real Redis, real DuckDB in each, real
// files): it publishes the same figures as the inline pipeline for the same asOf, both workers
// take partitions, a second enqueue of the same run does nothing, and the report job pre-renders
// the pilot reports.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { cli } from '../helpers/cli.ts';
import { jobEnv, killAllWorkers, readyWorker, testQueues, uniquePrefix, type WorkerProcess } from '../helpers/jobs.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline, type PipelineResult } from '../../jobs/pipeline.ts';
import { readHistory, readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { readSnapshotManifest } from '../../warehouse/snapshots/snapshot-manifest.ts';
import { readStates } from '../../warehouse/states/state-store.ts';
import { publishedDir, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import type { Queues } from '../../jobs/queue/client.ts';
import { PartitionPayload } from '../../jobs/queue/payloads.ts';
import type { RunInfo } from '../../jobs/queue/runs.ts';
import { loadPlatformConfig } from '../../config/platform.ts';
import { composeCustomerReports } from '../../pilot/service.ts';
import { customerReportsDir, reportPath } from '../../pilot/publish.ts';
import { REPORT_FORMATS, renderReport } from '../../pilot/report-formats.ts';

const CUSTOMERS = ['acme', 'globex', 'initech', 'umbrella'];
const START = new Date('2026-11-20T00:00:00Z');
const AS_OF = '2026-11-20T02:55:00.000Z';

let wh: TestWarehouse;
let env: Record<string, string>;
let queues: Queues;
let workers: WorkerProcess[];
let inline: PipelineResult;

beforeAll(async () => {
  wh = await openTestWarehouse();
  env = jobEnv(wh.root, uniquePrefix('flow'));
  await generateReports(wh.db, wh.layout, { customers: CUSTOMERS, streams: 2, sessions: 40, start: START, hours: 3, seed: 21 });
  // The reference: the inline pipeline (whose figures the warehouse tests prove) for the same asOf.
  inline = await runPipeline(wh, { asOf: new Date(AS_OF) });
  // The flow must build the states itself (the inline run's would all be reused).
  await fs.rm(wh.layout.state, { recursive: true, force: true });
  queues = await testQueues(env);
  // Both ready before the run is added, so that both are there to take partitions.
  // Both serve their metrics (worker --metrics-port): the run's counts are on whichever published it.
  workers = await Promise.all([readyWorker(env, { args: ['--metrics-port', '0'] }), readyWorker(env, { args: ['--metrics-port', '0'] })]);
}, 120_000);

afterAll(async () => {
  await killAllWorkers();
  await queues?.close();
  await wh?.close();
});

describe('a rollup run on the worker tier', () => {
  it('publishes, from partitions computed by both workers, the figures of the inline pipeline', async () => {
    const run = await cli(['enqueue', 'rollup', '--as-of', AS_OF, '--wait'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`enqueued rollup run ${AS_OF} (job plan-20261120T025500000Z)`);
    expect(run.stdout).toMatch(/rollup run 2026-11-20T02:55:00.000Z completed in .*: snapshot \S+ published, [\d,]+ reports, 8 streams/);

    const current = (await readCurrent(wh.layout))!;
    expect(current.snapshot).not.toBe(inline.manifest.snapshot);
    const flowManifest = await readSnapshotManifest(snapshotFiles(publishedDir(wh.layout, current.snapshot)).manifest);
    expect(flowManifest.runId).toBe('20261120T025500000Z');
    expect(flowManifest.rows).toEqual(inline.manifest.rows);
    expect(flowManifest.partitions.map((p) => [p.customerId, p.figures])).toEqual(inline.manifest.partitions.map((p) => [p.customerId, p.figures]));

    const ours = await snapshotRows(wh.db, wh.layout, current.snapshot);
    const reference = await snapshotRows(wh.db, wh.layout, inline.manifest.snapshot);
    expect(ours.summaries.length).toBeGreaterThan(0);
    expect(ours.series.length).toBeGreaterThan(0);
    expect(ours.summaries).toEqual(reference.summaries);
    expect(ours.series).toEqual(reference.series);
    expect(ours.platform).toEqual(reference.platform);

    // Each partition job says which worker took it (BullMQ records the worker's name on the job).
    const children = (await queues.partitions.getJobs(['completed'])).filter((j) => PartitionPayload.safeParse(j.data).data?.runId === flowManifest.runId);
    expect(children.map((j) => PartitionPayload.parse(j.data).partitions.map((p) => p.customerId).join(',')).sort()).toEqual(CUSTOMERS);
    const takers = [...new Set(children.map((j) => j.processedBy))].sort();
    expect(takers).toEqual(workers.map((w) => `${os.hostname()}#${w.pid}`).sort());
    // And their logs carry the job ids.
    for (const w of workers) {
      expect(w.logs.some((l) => l.msg === 'job done' && typeof l['jobId'] === 'string' && String(l['jobId']).startsWith('part-20261120T025500000Z-'))).toBe(true);
    }
  });

  it("serves its metrics: the jobs it ran by queue and outcome, and BullMQ's queue counts", async () => {
    const ready = workers[0]!.logs.find((l) => l.msg === 'worker ready')!;
    const url = String(ready['metrics']);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const text = await (await fetch(url)).text();
    const samples = new Map(text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]));
    const value = (name: string) => samples.get(name);
    const mine = (await queues.partitions.getJobs(['completed'])).filter((j) => j.processedBy === `${os.hostname()}#${workers[0]!.pid}`).length;
    expect(mine).toBeGreaterThan(0);
    const q = queues.partitions.name;
    expect(value(`p2ptel_job_duration_seconds_count{queue="${q}",job="partition",outcome="done"}`)).toBe(mine);
    for (const state of ['waiting', 'active', 'failed', 'delayed'] as const) {
      expect(value(`p2ptel_queue_jobs{queue="${q}",state="${state}"}`)).toBe(await queues.partitions.getJobCountByTypes(state));
    }
    expect(text).toContain('p2ptel_process_cpu_seconds_total');

    // The worker that published the run counted its partitions, reused and rebuilt, as its manifest says.
    const published = await readSnapshotManifest(snapshotFiles(publishedDir(wh.layout, (await readCurrent(wh.layout))!.snapshot)).manifest);
    const counted = { reused: 0, rebuilt: 0 };
    for (const w of workers) {
      const m = String(w.logs.find((l) => l.msg === 'worker ready')?.['metrics'] ?? '');
      if (!m) continue;
      const lines = (await (await fetch(m)).text()).split('\n');
      for (const result of ['reused', 'rebuilt'] as const) {
        const line = lines.find((l) => l.startsWith(`p2ptel_rollup_partitions_total{result="${result}"} `));
        if (line) counted[result] += Number(line.split(' ')[1]);
      }
    }
    expect(counted).toEqual({ reused: published.partitionStates!.reused, rebuilt: published.partitionStates!.rebuilt });
    expect(counted.rebuilt).toBeGreaterThan(0);
  });

  it('runs a run enqueued twice once', async () => {
    const history = await readHistory(wh.layout);
    const partitionJobs = (await queues.partitions.getJobs(['completed', 'failed', 'waiting', 'active'])).length;
    const again = await cli(['enqueue', 'rollup', '--as-of', AS_OF, '--wait'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`rollup run ${AS_OF} is already done: not added again`);
    expect(await readHistory(wh.layout)).toEqual(history);
    expect((await queues.partitions.getJobs(['completed', 'failed', 'waiting', 'active'])).length).toBe(partitionJobs);
    const plan = await queues.rollup.getJob('plan-20261120T025500000Z');
    expect(plan?.attemptsMade).toBe(1);
  });

  it('lists the run with its figures in cli runs', async () => {
    const r = await cli(['runs', '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const runs = JSON.parse(r.stdout) as RunInfo[];
    const run = runs.find((x) => x.kind === 'rollup' && x.asOf === AS_OF)!;
    expect(run).toMatchObject({
      state: 'completed',
      percent: 100,
      progress: '4/4 jobs, 4 partitions rebuilt, 0 reused',
      partitions: { done: 4, failed: 0, total: 4 },
      partitionsRebuilt: 4,
      partitionsReused: 0,
      reports: inline.manifest.rows.reports,
      streams: inline.manifest.rows.streams,
      snapshot: (await readCurrent(wh.layout))!.snapshot,
      published: true,
      error: null,
    });
    expect(run.durationMs).toBeGreaterThan(0);
    const table = await cli(['runs'], env);
    expect(table.stdout).toMatch(/rollup\s+2026-11-20T02:55:00.000Z\s+completed\s+4\/4 jobs, 4 partitions rebuilt, 0 reused/);
  });

  it("runs the report job: every customer's reports of the current snapshot, rendered by a worker as this process renders them", async () => {
    const r = await cli(['enqueue', 'reports', '--as-of', AS_OF, '--wait'], env);
    expect(r.code, r.stderr).toBe(0);
    const current = (await readCurrent(wh.layout))!.snapshot;
    expect(r.stdout).toMatch(new RegExp(`reports run 2026-11-20T02:55:00.000Z completed in .*: 8 reports of 4 customers for snapshot ${current} \\(4 rendered, 0 unchanged\\)`));
    const job = await queues.reports.getJob('reports-20261120T025500000Z');
    expect(job?.returnvalue).toMatchObject({ snapshot: current, customers: 4, rendered: 4, unchanged: 0, reports: 8 });

    const manifest = await readSnapshotManifest(snapshotFiles(publishedDir(wh.layout, current)).manifest);
    const platform = loadPlatformConfig();
    for (const customerId of CUSTOMERS) {
      const dir = customerReportsDir(wh.layout, current, customerId);
      const { reports } = await composeCustomerReports({ db: wh.db, layout: wh.layout, platform }, { id: current, manifest }, customerId, 600, null);
      expect(reports).toHaveLength(2);
      for (const report of reports) {
        for (const format of REPORT_FORMATS) {
          expect(await fs.readFile(`${dir}/${reportPath(report.streamId, format)}`, 'utf8'), `${report.streamId} ${format}`).toBe(renderReport(report, format));
        }
      }
      expect((await fs.readdir(dir)).sort()).toEqual(['index.html', 'reports.json', 'streams']);
    }
  });

  it('leaves no build folder behind', async () => {
    expect((await fs.readdir(wh.layout.snapshots)).filter((n) => n.startsWith('.build-'))).toEqual([]);
  });

  it('a later run with no new file reuses every partition but those whose held-back reports came due, and gives the figures of an inline run', async () => {
    const later = '2026-11-20T03:07:30.000Z';
    // Layered states hold back their reports after the asOf that built them (02:55): those that
    // hold some at or before `later` take them into a layer, one job per customer; the others are
    // reused without a job.
    const due = [...(await readStates(wh.layout)).values()].map((l) => l[0]!).filter((m) => m.pending && Date.parse(m.pending.minTs) <= Date.parse(later));
    const states = ['completed', 'failed', 'waiting', 'active'] as const;
    const jobsBefore = (await queues.partitions.getJobs([...states])).length;
    const r = await cli(['enqueue', 'rollup', '--as-of', later, '--wait'], env);
    expect(r.code, r.stderr).toBe(0);
    expect((await queues.partitions.getJobs([...states])).length).toBe(jobsBefore + new Set(due.map((m) => m.customerId)).size);
    const current = (await readCurrent(wh.layout))!;
    const manifest = await readSnapshotManifest(snapshotFiles(publishedDir(wh.layout, current.snapshot)).manifest);
    expect(manifest.partitionStates).toEqual({
      reused: 4 - due.length,
      rebuilt: due.length,
      reasons: due.length > 0 ? { 'held reports came due': due.length } : {},
    });
    const inlineLater = await runPipeline(wh, { asOf: new Date(later) });
    expectSameSnapshotRows(await snapshotRows(wh.db, wh.layout, current.snapshot), await snapshotRows(wh.db, wh.layout, inlineLater.manifest.snapshot));
    expect(manifest.rows).toEqual(inlineLater.manifest.rows);
  });
});
