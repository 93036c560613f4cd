// A spool write that fails (disk full, out of descriptors) makes the collector answer 503 while it
// lasts, say so in /readyz and /metrics, and take reports again (202) within seconds once the space
// or the descriptors are back, without a restart; every report it acknowledged lands once.
// The disk is a real tmpfs of 1 MiB mounted over the spool folder (root only: skipped elsewhere,
// saying so); the descriptors are a real `collect` process whose limit `prlimit` lowers.
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { sampleReport, startTestCollector, type TestCollector } from '../helpers/collector.ts';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { addTenant } from '../../control/tenants.ts';
import { addIngestKey } from '../../control/ingest-keys.ts';
import { listFiles } from '../../lib/fsx.ts';
import { fileList } from '../../warehouse/duckdb/sql-text.ts';
import { PROJECT_ROOT } from '../../lib/version.ts';

const NOW = Date.now();
let serial = 0;
const batchOf = (n: number) => Array.from({ length: n }, () => sampleReport('acme:live-main', new Date(NOW - 60_000), serial, { reportId: `rec-${serial++}` }));

/** Whether this process may mount a tmpfs (root in a sandbox that allows it). */
function canMount(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const MOUNT = canMount();
if (!MOUNT) console.warn('spool-recovery: the disk-full case is skipped: it needs root and `mount -t tmpfs` (a small tmpfs over the spool folder)');
const PRLIMIT = (() => {
  try {
    execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
if (!PRLIMIT) console.warn('spool-recovery: the out-of-descriptors case is skipped: it needs prlimit (util-linux)');

/** Post until the answer is `status`, for at most `ms`; every 202 adds its reports to `acked`. */
async function postUntil(post: (body: string) => Promise<{ status: number }>, status: number, ms: number, acked: Set<string>, size = 20): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const reports = batchOf(size);
    const res = await post(JSON.stringify({ reports }));
    if (res.status === 202) for (const r of reports) acked.add(r['reportId'] as string);
    if (res.status === status) return res.status;
    if (Date.now() > until) return res.status;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function landedCopies(root: string, db: TestWarehouse['db']): Promise<Map<string, number>> {
  const files = await listFiles(path.join(root, 'raw', 'session_reports'), '.parquet');
  if (files.length === 0) return new Map();
  const rows = await db.withSession((s) => s.all<{ reportId: string; n: number }>(`SELECT reportId, count(*)::INTEGER AS n FROM read_parquet(${fileList(files)}, hive_partitioning = false) GROUP BY reportId`));
  return new Map(rows.map((r) => [r.reportId, r.n]));
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

describe('the spool after a write error', () => {
  it.skipIf(!MOUNT)('disk full: 503 while it lasts, said in /readyz and /metrics; 202 again within seconds once there is room; nothing lost', async () => {
    // The spool folder is made by the collector; mount first, on a folder of the test's own.
    const wh = await openTestWarehouse();
    cleanups.push(() => wh.close());
    const spoolDir = path.join(wh.root, 'spool', 'small-disk');
    await fs.mkdir(spoolDir, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', spoolDir]);
    cleanups.push(async () => void execFileSync('umount', ['-l', spoolDir]));
    let c: TestCollector | null = null;
    try {
      c = await startTestCollector({ env: { COLLECTOR_METRICS_PORT: '0' }, warehouse: wh, spoolDir });
      const acked = new Set<string>();
      const post = (body: string) => c!.post(body);
      // Fill the disk: about 14 KB a batch, 1 MiB in all.
      expect(await postUntil(post, 503, 20_000, acked)).toBe(503);
      expect(acked.size).toBeGreaterThan(500);
      const ready = await fetch(`${c.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { detail: string }).detail).toMatch(/ENOSPC/);
      const metrics = await (await fetch(c.collector.metricsUrl!)).text();
      expect(metrics).toMatch(/^p2ptel_collector_spool_failing 1$/m);
      expect(metrics).toMatch(/^p2ptel_collector_spool_write_errors_total\{code="ENOSPC"\} [1-9]/m);
      // Still full: still 503.
      expect((await post(JSON.stringify({ reports: batchOf(20) }))).status).toBe(503);

      execFileSync('mount', ['-o', 'remount,size=16m', spoolDir]);
      expect(await postUntil(post, 202, 10_000, acked)).toBe(202);
      expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
      expect(await (await fetch(c.collector.metricsUrl!)).text()).toMatch(/^p2ptel_collector_spool_failing 0$/m);
      await postUntil(post, 0, 300, acked); // a few more after recovery

      await c.collector.flush();
      const copies = await landedCopies(wh.root, wh.db);
      expect([...acked].filter((id) => copies.get(id) !== 1)).toEqual([]);
      expect([...copies.values()].every((n) => n === 1)).toBe(true);
    } finally {
      await c?.collector.close();
    }
  }, 90_000);

  it.skipIf(!PRLIMIT)('out of descriptors: 503 while it lasts; 202 again within seconds once descriptors are back; nothing lost', async () => {
    const wh = await openTestWarehouse();
    cleanups.push(() => wh.close());
    await addTenant(wh.layout, { customerId: 'acme', name: 'ACME', cdnPricePerGb: null, savingsSharePct: 25 });
    const key = (await addIngestKey(wh.layout, { customer: 'acme' })).key;
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const child: ChildProcess = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'collect', '--warehouse', wh.root, '--port', String(port)], {
      // A new segment every 0.3 s: each needs a descriptor.
      env: { ...process.env, LOG_LEVEL: 'warn', DUCKDB_THREADS: '1', COLLECTOR_FLUSH_SECONDS: '0.3', COLLECTOR_WORKERS: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    cleanups.push(async () => void child.kill('SIGKILL'));
    let log = '';
    child.stderr!.on('data', (d: Buffer) => void (log = (log + d.toString()).slice(-20_000)));
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 300 && !(await fetch(`${url}/healthz`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 100));
    const acked = new Set<string>();
    // One kept-alive connection: posts need no new descriptor.
    const post = (body: string) => fetch(`${url}/v1/session-reports`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Ingest-Key': key }, body, keepalive: true }).then(async (r) => ({ status: r.status, text: await r.text() }));
    expect(await postUntil(post, 202, 5_000, acked)).toBe(202);

    const pid = String(child.pid);
    const [soft, hard] = execFileSync('prlimit', ['--pid', pid, '--nofile', '--raw', '--noheadings', '--output', 'SOFT,HARD']).toString().trim().split(/\s+/);
    // RLIMIT_NOFILE bounds the descriptor's number, not how many are open: a limit of the open
    // count still lets opens fill the holes below it (descriptors closed since). At 3 (stdin,
    // stdout and stderr stay), every new descriptor fails; the open ones keep working.
    execFileSync('prlimit', ['--pid', pid, `--nofile=3:${hard}`]);
    try {
      expect(await postUntil(post, 503, 10_000, acked)).toBe(503);
    } finally {
      execFileSync('prlimit', ['--pid', pid, `--nofile=${soft}:${hard}`]);
    }
    expect(await postUntil(post, 202, 10_000, acked)).toBe(202);
    await postUntil(post, 0, 300, acked);

    child.kill('SIGTERM');
    expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0);
    const copies = await landedCopies(wh.root, wh.db);
    // The collector's own account, should a report be missing.
    if ([...acked].some((id) => copies.get(id) !== 1)) console.error(`collector log (tail):\n${log}`);
    expect([...acked].filter((id) => copies.get(id) !== 1)).toEqual([]);
    expect([...copies.values()].every((n) => n === 1)).toBe(true);
  }, 90_000);
});
