// The API's memory does not grow with history (docs/architecture.md, principle 4): the same 10 streams with
// 3 days and with 30 days of history, each served by a server in its own process, through start
// and a sweep of timeseries requests over every stream, window and standard bucket size; the peak
// resident memory (VmHWM from /proc) of the 30-day server stays within +25 % of the 3-day one.
// (Ten streams, not twenty: a request's memory depends on its stream's history, not on how many
// other streams there are, and the 300 requests of a sweep, four at a time, meet every window and
// bucket size of every stream; twenty took twice the time for the same verdict.)
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
import { STANDARD_BUCKET_SECONDS, WINDOW_NAMES } from '../../warehouse/figures/windows.ts';

const END = new Date('2026-11-21T00:00:00Z');
const DAY = 86_400_000;
const CUSTOMERS = ['m1', 'm2'];
const STREAMS = 5; // per customer: 10 streams
const SESSIONS_PER_DAY = 20; // per stream: a good share of the minutes of a day hold a report

interface Served {
  readyKb: number;
  peakKb: number;
  answers: Record<number, number>;
}

const warehouses: TestWarehouse[] = [];
const children = new Set<ChildProcess>();

async function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)![1]);
}

/** A warehouse holding `days` of history up to END for the same streams, published. */
async function warehouseOf(days: number): Promise<{ wh: TestWarehouse; tokens: string[] }> {
  const wh = await openTestWarehouse();
  warehouses.push(wh);
  await generateReports(wh.db, wh.layout, {
    customers: CUSTOMERS,
    streams: STREAMS,
    sessions: SESSIONS_PER_DAY * days,
    start: new Date(END.getTime() - days * DAY),
    hours: days * 24,
    seed: 11,
  });
  await runPipeline(wh, { asOf: END });
  const secret = await tokenSecret(wh.layout, null);
  const tokens = [];
  for (const customerId of CUSTOMERS) {
    const tenant = await addTenant(wh.layout, { customerId, name: customerId, cdnPricePerGb: null, savingsSharePct: 25 });
    tokens.push(await issueToken(secret, { role: 'tenant', tenant }, 3600));
  }
  return { wh, tokens };
}

/** Serve the warehouse in a child process, sweep every series, and read its memory. */
async function serveAndSweep(wh: TestWarehouse, tokens: string[]): Promise<Served> {
  const child: ChildProcess = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'serve', '--warehouse', wh.root, '--port', '0'], {
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      child.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /API listening on (http:\/\/\S+)/.exec(err);
        if (m) resolve(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`server exited (${code}): ${err}`)));
    });
    const pid = child.pid!;
    const readyKb = await statusKb(pid, 'VmRSS');
    const answers: Record<number, number> = {};
    for (const [i, customerId] of CUSTOMERS.entries()) {
      const headers = { Authorization: `Bearer ${tokens[i]!}` };
      const list = (await (await fetch(`${url}/telemetry/streams?window=all`, { headers })).json()) as { streams: string[] };
      expect(list.streams).toHaveLength(STREAMS);
      for (const streamId of list.streams) {
        expect(streamId.startsWith(`${customerId}:`)).toBe(true);
        // Four requests at a time, like a dashboard loading its panels.
        const urls = WINDOW_NAMES.flatMap((w) => STANDARD_BUCKET_SECONDS.map((b) => `${url}/telemetry/timeseries?streamId=${streamId}&window=${w}&bucketSeconds=${b}`));
        for (let k = 0; k < urls.length; k += 4) {
          for (const res of await Promise.all(urls.slice(k, k + 4).map((u) => fetch(u, { headers })))) {
            answers[res.status] = (answers[res.status] ?? 0) + 1;
            await res.arrayBuffer();
          }
        }
      }
    }
    return { readyKb, peakKb: await statusKb(pid, 'VmHWM'), answers };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)));
  }
}

let short: { wh: TestWarehouse; tokens: string[] };
let long: { wh: TestWarehouse; tokens: string[] };

beforeAll(async () => {
  short = await warehouseOf(3);
  long = await warehouseOf(30);
}, 240_000);

afterAll(async () => {
  // A server still running (the test timed out mid-sweep) goes too.
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const wh of warehouses) await wh.close();
});

describe('API memory against history', () => {
  it('peaks within +25 % on 30 days of what it peaks on 3 days of the same 10 streams', async () => {
    const s = await serveAndSweep(short.wh, short.tokens);
    const l = await serveAndSweep(long.wh, long.tokens);
    // The sweep really read series: 30 requests per stream, most answered, the too-long ones refused.
    expect(l.answers[200]! + (l.answers[400] ?? 0)).toBe(10 * 30);
    expect(l.answers[200]).toBeGreaterThan(10 * 20);
    const mb = (kb: number) => Math.round(kb / 1024);
    console.log(`serve memory: 3 days ready ${mb(s.readyKb)} MB peak ${mb(s.peakKb)} MB; 30 days ready ${mb(l.readyKb)} MB peak ${mb(l.peakKb)} MB`);
    expect(l.readyKb).toBeLessThan(s.readyKb * 1.25);
    expect(l.peakKb).toBeLessThan(s.peakKb * 1.25);
  }, 300_000); // two servers and 600 requests: about 20 s alone, much more on a busy machine
});
