// Exports stream with bounded memory: a server in its own process exports a large stream while
// its resident memory is sampled from /proc; a 20-day export must not cost much more than a
// one-day export, nor anywhere near the bytes it sends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { addTenant } from '../../control/tenants.ts';
import { issueToken, tokenSecret } from '../../api/tokens.ts';
import { PROJECT_ROOT } from '../../lib/version.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { snapshotFiles } from '../../warehouse/snapshots/snapshot-folders.ts';

let wh: TestWarehouse;
let server: ChildProcess;
let url: string;
let token: string;
let reports: number;

async function rssKb(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
}

/** Download an export (reading as fast as possible) while sampling the server's RSS. */
async function exportWithPeak(window: string, format: string): Promise<{ bytes: number; lines: number; growthMb: number }> {
  const pid = server.pid!;
  const base = await rssKb(pid);
  let peak = base;
  const timer = setInterval(() => void rssKb(pid).then((r) => (peak = Math.max(peak, r))).catch(() => {}), 25);
  const res = await fetch(`${url}/telemetry/export?streamId=big:live-main&window=${window}&format=${format}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body!) {
    const c = chunk as Uint8Array;
    bytes += c.length;
    for (let i = 0; i < c.length; i++) if (c[i] === 10) lines++;
  }
  clearInterval(timer);
  return { bytes, lines, growthMb: Math.round((peak - base) / 1024) };
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  await generateReports(wh.db, wh.layout, {
    customers: ['big'],
    streams: 2,
    // 8 000 sessions a stream over 20 days: about 770 000 reports, an 'all' NDJSON export of about
    // 190 MB (CSV about 80 MB), the 24h one about 10 MB, the 7d Arrow one about 30 MB. A server
    // that buffered an export whole would grow by at least the bytes it sends, twice the
    // `bytes / 2` bounds below; a streaming one grew by 20-45 MB here, once warm (the 24h export
    // first). (16 000 sessions, 400 MB, took twice the time for the same verdict: the generation,
    // the roll-up and every export scale with the reports.)
    sessions: 8_000,
    start: new Date('2026-11-01T00:00:00Z'),
    hours: 20 * 24,
    seed: 8,
  });
  const run = await runPipeline(wh, { asOf: new Date('2026-11-21T00:00:00Z') });
  const [row] = await wh.db.withSession((s) =>
    s.all<{ reports: number }>(
      `SELECT reports FROM read_parquet(${quotedString(snapshotFiles(run.dir).summaries('big'))}) WHERE windowName = 'all' AND streamId = 'big:live-main'`,
    ),
  );
  reports = row!.reports;
  const tenant = await addTenant(wh.layout, { customerId: 'big', name: 'Big', cdnPricePerGb: null, savingsSharePct: 25 });
  token = await issueToken(await tokenSecret(wh.layout, null), { role: 'tenant', tenant }, 3600);
  server = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'serve', '--warehouse', wh.root, '--port', '0'], {
    env: { ...process.env, API_DUCKDB_MEMORY_LIMIT: '128MB', API_DUCKDB_THREADS: '2', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  url = await new Promise<string>((resolve, reject) => {
    let err = '';
    server.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /API listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    server.on('exit', (code) => reject(new Error(`server exited (${code}): ${err}`)));
  });
}, 240_000);

afterAll(async () => {
  server?.kill('SIGTERM');
  await new Promise((r) => server?.once('exit', r));
  await wh?.close();
});

describe('export memory', () => {
  it('stays bounded: twenty days cost about what one day costs, far below the bytes sent', async () => {
    const oneDay = await exportWithPeak('24h', 'ndjson');
    const all = await exportWithPeak('all', 'ndjson');
    // Every deduplicated report of the stream went out, one line each.
    expect(all.lines).toBe(reports);
    expect(all.bytes).toBeGreaterThan(15 * oneDay.bytes);
    expect(all.bytes).toBeGreaterThan(175 * 2 ** 20);
    expect(all.growthMb).toBeLessThan(450);
    // A buffering server would grow by the 180 MB more that it sends.
    expect(all.growthMb).toBeLessThan(oneDay.growthMb + 125);
    expect(all.growthMb * 2 ** 20).toBeLessThan(all.bytes / 2);
    console.log(`export memory: 24h ${oneDay.bytes} bytes +${oneDay.growthMb} MB; all ${all.bytes} bytes +${all.growthMb} MB`);
  });

  it('streams CSV and Arrow the same way', async () => {
    const csv = await exportWithPeak('all', 'csv');
    expect(csv.lines).toBe(reports + 1); // and a header
    expect(csv.growthMb).toBeLessThan(450);
    // A buffering server grows by at least the bytes it sends (82 MB, 78 MiB of CSV); a streaming one
    // grew by 23-46 MB in full-suite runs (2026-11-27: the 46 MB run failed a bound of half the
    // bytes), and by 53 and 59 MB on a machine that ran the suite 2.3x slower (2026-11-29: the 59 MB
    // run failed a bound of three quarters, 58.8 MB). The same runs' 200 MB JSON export grew by
    // 67-72 MB: most of the growth is the process's own, not the bytes. Nine tenths (70.6 MiB)
    // lies between the streaming runs seen and a buffering server's least.
    expect(csv.growthMb * 2 ** 20).toBeLessThan(csv.bytes * 0.9);
    const arrow = await exportWithPeak('7d', 'arrow');
    expect(arrow.bytes).toBeGreaterThan(25 * 2 ** 20);
    expect(arrow.growthMb).toBeLessThan(450);
    console.log(`export memory: csv ${csv.bytes} bytes +${csv.growthMb} MB; arrow 7d ${arrow.bytes} bytes +${arrow.growthMb} MB`);
  });
});
