// `start` restarted on an existing warehouse: its API (serving the snapshot CURRENT names) and its
// collector (with the ingest key printed before) answer before the first run ends; the key is the
// same at every start; a SIGKILLed start's run lock, and dead processes' scratch, are cleared
// by the next start's run; and pilot reports rendered within a day are kept. Real child processes, DuckDB, Parquet and HTTP on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { PROJECT_ROOT } from '../../lib/version.ts';
import { cli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/warehouse.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { compactIso } from '../../lib/time.ts';

interface StartProcess {
  child: ChildProcess;
  startedAt: number;
  stdout(): string;
  /** The first match of `re` in stdout, waited for. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  stop(signal: NodeJS.Signals): Promise<void>;
}

let dir: string;
const running: StartProcess[] = [];

function startProcess(): StartProcess {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'start'], {
    env: { ...process.env, WAREHOUSE_DIR: dir, PORT: '0', COLLECTOR_PORT: '0', LOG_LEVEL: 'warn', DUCKDB_MEMORY_LIMIT: '1GB', COLLECTOR_WORKERS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const p: StartProcess = {
    child,
    startedAt: Date.now(),
    stdout: () => out,
    async waitFor(re, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = re.exec(out);
        if (m) return m;
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no ${re} in start's output (exit ${child.exitCode}):\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  running.push(p);
  return p;
}

/** A gzip'd batch of one fresh report of `streamId`, posted with `key`. */
async function postReport(collector: string, key: string, streamId: string): Promise<number> {
  const id = `restart-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const report = { reportId: id, sessionId: id, streamId, ts: new Date().toISOString(), intervalMs: 30000, seq: 0, final: true, cohort: 'p2p', contentType: 'live', bytesOffloaded: 3e6, bytesFallback: 1e6, peerCount: 3, bufferHealth: 12.5, watchMs: 30000, startupMs: 900 };
  const res = await fetch(`${collector}/v1/session-reports`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'X-Ingest-Key': key },
    body: zlib.gzipSync(JSON.stringify({ reports: [report] })),
  });
  await res.arrayBuffer();
  return res.status;
}

/** The pid of a process that has exited: what a killed holder's records name. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

const PORTS = /API on (http:\S+) and collector on (http:\S+) answer now \((snapshot \S+|no snapshot yet)\)/;
const KEY = /ingest key of (\S+) \(public, write-only; the same at every start\):\n(ingest_\S+)\n/;
const TOKEN = /its token, valid 30 days:\n(\S+)\n/;
const STREAM = /telemetry\/metrics\/([a-z0-9_-]+:[a-z0-9_-]+)\?/;

beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  for (const p of running) await p.stop('SIGKILL');
  await fs.rm(dir, { recursive: true, force: true });
});

describe('start restarted on an existing warehouse', () => {
  it('answers on both ports with the key it printed before, before its first run ends; a SIGKILLed start leaves nothing the next one keeps', async () => {
    const layout = warehouseLayout(dir);
    const first = startProcess();
    expect((await first.waitFor(PORTS))[3]).toBe('no snapshot yet');
    const [, customer, key] = await first.waitFor(KEY);
    const [, streamId] = await first.waitFor(STREAM);
    const [, collectorUrl] = (await first.waitFor(PORTS)).slice(1);
    expect(await postReport(collectorUrl!, key!, streamId!)).toBe(202);
    await first.stop('SIGTERM');
    const before = (await readCurrent(layout))!;

    // More to roll up, so that the next start's first run takes a while.
    const gen = await cli(['generate', '--customers', customer!, '--streams', '3', '--sessions', '1500', '--start', new Date(Date.now() - 2 * 3_600_000).toISOString(), '--hours', '2', '--seed', '9'], { WAREHOUSE_DIR: dir });
    expect(gen.code, gen.stderr).toBe(0);

    const second = startProcess();
    const [, apiUrl, collector2, served] = await second.waitFor(PORTS);
    expect(served).toBe(`snapshot ${before.snapshot}`);
    const token = TOKEN.exec(first.stdout())![1]!;
    const streams = await fetch(`${apiUrl}/telemetry/streams?window=24h`, { headers: { Authorization: `Bearer ${token}` } });
    const body = (await streams.json()) as unknown;
    const accepted = await postReport(collector2!, key!, streamId!);
    const answeredMs = Date.now() - second.startedAt;
    // Served while the first run catches up: it has not published yet.
    expect(second.stdout()).not.toMatch(/snapshot \S+ published/);
    expect(streams.status, JSON.stringify(body)).toBe(200);
    expect(accepted).toBe(202);
    // A generous bound (a loaded machine); the process's own start is what it measures.
    expect(answeredMs).toBeLessThan(15_000);
    console.log(`restart: API and collector answered ${answeredMs} ms after the process started`);

    // Killed in the middle of its first run: its run lock stays behind.
    const locks = async () => (await fs.readdir(layout.snapshots)).filter((n) => /^run-.*\.lock$/.test(n));
    await new Promise((r) => setTimeout(r, 300));
    const heldBefore = await locks();
    await second.stop('SIGKILL');
    expect(second.stdout()).not.toMatch(/snapshot \S+ published/);
    expect(heldBefore.length).toBeGreaterThan(0);
    // And what another killed process of this host left: a run lock and a state scratch folder.
    const pid = await deadPid();
    const planted = path.join(layout.snapshots, `run-${compactIso(new Date(Date.now() - 60_000))}.lock`);
    await fs.writeFile(planted, JSON.stringify({ host: os.hostname(), pid, token: 'feedfacefeedface' }));
    const partition = path.join(layout.state, `customer=${customer}`);
    const date = (await fs.readdir(partition)).find((d) => d.startsWith('date='))!;
    const scratch = path.join(partition, date, `.tmp-${pid}@${os.hostname().replace(/[^A-Za-z0-9._-]/g, '_')}~20261128T000000000Z-deadbeef`);
    await fs.mkdir(scratch, { recursive: true });

    const third = startProcess();
    const [, , collector3] = await third.waitFor(PORTS);
    expect(await postReport(collector3!, key!, streamId!)).toBe(202);
    await third.waitFor(/snapshot \S+ published/);
    // (Its own live runs may hold a lock of theirs by now.)
    const left = await locks();
    for (const lock of [...heldBefore, path.basename(planted)]) expect(left).not.toContain(lock);
    expect(await fs.stat(scratch).catch(() => null)).toBeNull();
    // The same key at every start.
    expect((await third.waitFor(KEY))[2]).toBe(key);
    // The pilot reports the first start rendered minutes ago are kept, not
    // rendered again before the live loop; the static site it names is the first start's.
    expect(first.stdout()).toMatch(/reports of 3 customers for snapshot \S+ \(3 rendered, 0 unchanged\)/);
    expect(third.stdout()).not.toMatch(/reports of \d+ customers? for snapshot/);
    expect(third.stdout()).toMatch(/pilot reports: every customer's were rendered less than 24 h ago: kept/);
    const site = /reports as a static site \(rendered \S+\): (\S+index\.html)/.exec(third.stdout())![1]!;
    expect(first.stdout()).toContain(`reports as a static site: ${site}`);
    expect((await fs.readFile(site, 'utf8')).startsWith('<!DOCTYPE html>')).toBe(true);
    await third.stop('SIGTERM');
  }, 180_000);
});
