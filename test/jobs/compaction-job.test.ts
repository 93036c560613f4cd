// Compaction as a job of the worker tier (real Redis, real worker processes, real files): the
// compaction scheduler's jobs merge a partition of many small files, which rollup runs on the
// workers do not do themselves; the next published snapshot equals a from-scratch run over the
// original files. A job that finds another compaction holding the warehouse lock is skipped, and
// `runs` and /metrics say so.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { cli } from '../helpers/cli.ts';
import { jobEnv, killAllWorkers, readyWorker, testQueues, uniquePrefix, type WorkerProcess } from '../helpers/jobs.ts';
import { landingPath, writeReportsParquet, type HandReport } from '../helpers/reports.ts';
import { expectSameSnapshotRows, snapshotRows } from '../helpers/snapshot-rows.ts';
import type { Queues } from '../../jobs/queue/client.ts';
import { waitForRun } from '../../jobs/queue/enqueue.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { discoverLanding } from '../../warehouse/landing/landed-files.ts';
import { readSnapshotManifest } from '../../warehouse/snapshots/snapshot-manifest.ts';
import { publishedDir, snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';
import { takeLock } from '../../lib/file-lock.ts';
import { readdirSyncOrEmpty } from '../../lib/fsx.ts';

let live: TestWarehouse;
let ref: TestWarehouse;
let env: Record<string, string>;
let queues: Queues;

const DAY = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
const SMALL_FILES = 20;

/** The samples of a worker's /metrics, by name and labels. */
async function metrics(w: WorkerProcess): Promise<Map<string, number>> {
  const url = String((await w.waitForLog((l) => l.msg === 'worker ready'))['metrics']);
  const text = await (await fetch(url)).text();
  return new Map(text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]));
}

/** Report i of small file n: the SDK's report as first sent. */
function smallReport(customerId: string, n: number, i: number): HandReport {
  return {
    reportId: `${customerId}-${n}-${i}`,
    sessionId: `${customerId}:s${n % 3}-${i % 2}`,
    streamId: `${customerId}:s${n % 3}`,
    ts: `${DAY}T${String(n % 24).padStart(2, '0')}:${String(i * 7).padStart(2, '0')}:00Z`,
    bytesOffloaded: 1000 * (n + 1) + i,
    bytesFallback: 500 + i,
    peerCount: (n + i) % 5,
    final: i === 3,
  };
}

/**
 * A small file of a few reports, landed alike in both warehouses; from the second file on, its
 * last row is a retry of the previous file's first report (a copy is the same report: same id,
 * ts and content, as docs/sdk-ingest.md defines a duplicate).
 */
async function landSmall(customerId: string, n: number): Promise<void> {
  const rows = [0, 1, 2, 3].map((i) => (i === 3 && n > 0 ? smallReport(customerId, n - 1, 0) : smallReport(customerId, n, i)));
  const name = `ingest-${String(n).padStart(4, '0')}.parquet`;
  const file = landingPath(ref.root, customerId, DAY, name);
  await writeReportsParquet(ref.db, file, rows);
  const to = landingPath(live.root, customerId, DAY, name);
  await fs.mkdir(path.dirname(to), { recursive: true });
  await fs.copyFile(file, to);
}

const filesOf = async (customerId: string) => (await discoverLanding(live.layout)).files.filter((f) => f.customerId === customerId).map((f) => path.basename(f.relPath));

beforeAll(async () => {
  live = await openTestWarehouse();
  ref = await openTestWarehouse();
  // No rollup tick during the tests (once a year): runs are enqueued by hand.
  env = jobEnv(live.root, uniquePrefix('compjob'), { WORKER_METRICS_PORT: '0', ROLLUP_SCHEDULE: '0 0 1 1 *' });
  queues = await testQueues(env);
  for (let n = 0; n < SMALL_FILES; n++) await landSmall('acme', n);
  for (let n = 0; n < 3; n++) await landSmall('globex', n);
}, 60_000);

afterAll(async () => {
  await killAllWorkers();
  await queues?.close();
  await live?.close();
  await ref?.close();
});

describe('compaction on the worker tier', () => {
  it('the scheduled job compacts a partition of many small files, and the next snapshot equals a from-scratch run', async () => {
    const worker = await readyWorker(env);
    // A rollup run on the workers leaves the small files alone: compaction is the job's.
    const first = new Date(Math.floor(Date.now() / 1000) * 1000 - 5000);
    expect((await cli(['enqueue', 'rollup', '--as-of', first.toISOString(), '--wait'], env)).code).toBe(0);
    expect(await filesOf('acme')).toHaveLength(SMALL_FILES);

    const scheduled = await cli(['schedule', '--compact-every', '1s'], env);
    expect(scheduled.code, scheduled.stderr).toBe(0);
    expect(scheduled.stdout).toMatch(/^compaction\s+every 1s\s+\d{4}-/m);
    await worker.waitForLog((l) => l.msg === 'compaction done' && l['compacted'] === 1, 30_000);
    const acme = await filesOf('acme');
    expect(acme).toHaveLength(1);
    expect(acme[0]).toMatch(/^compacted-/);
    // Three small files are not enough to compact (COMPACTION_MIN_FILES).
    expect(await filesOf('globex')).toHaveLength(3);

    const asOf = new Date(Math.floor(Date.now() / 1000) * 1000);
    const r = await cli(['enqueue', 'rollup', '--as-of', asOf.toISOString(), '--wait'], env);
    expect(r.code, r.stderr).toBe(0);
    const run = await waitForRun(queues, 'rollup', asOf, { timeoutMs: 60_000 });
    expect(run.published).toBe(true);
    const manifest = await readSnapshotManifest(snapshotFiles(publishedDir(live.layout, run.snapshot!)).manifest);
    expect(manifest.partitions.find((p) => p.customerId === 'acme')!.files.map((f) => path.basename(f.path))).toEqual(acme);
    const base = await runPipeline(ref, { asOf, rebuild: true, compact: false });
    expectSameSnapshotRows(await snapshotRows(live.db, live.layout, run.snapshot!), await snapshotRows(ref.db, ref.layout, base.manifest.snapshot));
    expect(manifest.rows).toEqual(base.manifest.rows);
    // The run's leases on the states it read (plan: globex's reused; partition job: acme's built) went with its publication.
    expect(readdirSyncOrEmpty(path.join(live.layout.state, '.leases'))).toEqual([]);

    const runs = await cli(['runs', '--limit', '50'], env);
    expect(runs.stdout).toMatch(/^compaction\s+\S+\s+completed\s+1 partitions compacted\s.*20 small files merged into 1/m);
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  }, 120_000);

  it('a job that finds another compaction running is skipped, and runs and /metrics say so', async () => {
    const worker = await readyWorker(env);
    await fs.mkdir(live.layout.compaction, { recursive: true });
    // Between two jobs (one a second): a job may hold the lock for a moment.
    const lock = await takeLock(path.join(live.layout.compaction, 'compact.lock'), { staleMs: 5000, waitMs: 10_000 });
    try {
      await worker.waitForLog((l) => l.msg === 'compaction skipped: another compaction holds the warehouse lock', 15_000);
    } finally {
      await lock.release();
    }
    await worker.waitForLog((l) => l.msg === 'compaction done', 15_000);
    const m = await metrics(worker);
    expect(m.get('p2ptel_compactions_total{outcome="skipped"}')).toBeGreaterThanOrEqual(1);
    expect(m.get('p2ptel_compactions_total{outcome="done"}')).toBeGreaterThanOrEqual(1);
    const runs = await cli(['runs', '--limit', '50'], env);
    expect(runs.stdout).toMatch(/^compaction\s+\S+\s+skipped\s+-\s+-\s+-\s+-\s+another compaction held the warehouse lock/m);

    // Back to a rare compaction: no job during the rest of the run.
    expect((await cli(['schedule', '--compact-every', '24h'], env)).code).toBe(0);
    worker.child.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
  }, 60_000);
});
