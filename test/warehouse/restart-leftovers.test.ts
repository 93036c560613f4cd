// What restarts rely on, file by file: landing changes seen by folder times (idle ticks), scratch
// and run locks of dead processes told from live ones, the desired schedule kept per queue
// prefix, and the sample ingest key kept across starts until it is revoked. Real files in a
// temporary folder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { tempDir } from '../helpers/warehouse.ts';
import { warehouseLayout, type WarehouseLayout } from '../../warehouse/layout.ts';
import { landedSince } from '../../warehouse/landing/landing-changes.ts';
import { ownedScratchName, scratchOwnerDead } from '../../lib/scratch-owner.ts';
import { clearDeadRunLocks, lockRun } from '../../warehouse/snapshots/run-lock.ts';
import { readDesiredSchedule, writeDesiredSchedule } from '../../control/schedule.ts';
import { sampleIngestKey } from '../../control/sample-key.ts';
import { addTenant } from '../../control/tenants.ts';
import { revokeIngestKey } from '../../control/ingest-keys.ts';
import { compactIso } from '../../lib/time.ts';
import { silentLogger } from '../../lib/log.ts';

let dir: string;
let layout: WarehouseLayout;

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

const host = os.hostname().replace(/[^A-Za-z0-9._-]/g, '_');

beforeAll(async () => {
  dir = await tempDir();
  layout = warehouseLayout(dir);
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('leftovers of dead processes', () => {
  it('tells landing changes since an instant by the folders of the landing area', async () => {
    const date = path.join(layout.rawReports, 'customer=acme', 'date=2026-11-28');
    await fs.mkdir(date, { recursive: true });
    await fs.writeFile(path.join(date, 'a.parquet'), 'x');
    const since = Date.now() + 1000; // file system times are coarse: an instant clearly after
    expect(landedSince(layout, since)).toBe(false);
    await new Promise((r) => setTimeout(r, 1100));
    await fs.writeFile(path.join(date, 'b.parquet.tmp-1'), 'x');
    await fs.rename(path.join(date, 'b.parquet.tmp-1'), path.join(date, 'b.parquet'));
    expect(landedSince(layout, since)).toBe(true);
    expect(landedSince(warehouseLayout(path.join(dir, 'none')), 0)).toBe(false);
  });

  it('names scratch by its process, and calls dead only a gone process of this host', async () => {
    expect(ownedScratchName('x')).toBe(`${process.pid}@${host}~x`);
    expect(scratchOwnerDead(ownedScratchName('x'))).toBe(false);
    const pid = await deadPid();
    expect(scratchOwnerDead(`${pid}@${host}~x`)).toBe(true);
    expect(scratchOwnerDead(`${pid}@another-host~x`)).toBe(false);
    expect(scratchOwnerDead('20261128T000000000Z-deadbeef')).toBe(false);
  });

  it('removes run locks whose holder is gone, and keeps a live one', async () => {
    await fs.mkdir(layout.snapshots, { recursive: true });
    const dead = `run-${compactIso(new Date('2026-11-28T01:00:00Z'))}.lock`;
    await fs.writeFile(path.join(layout.snapshots, dead), JSON.stringify({ host: os.hostname(), pid: await deadPid(), token: '0123456789abcdef' }));
    const release = await lockRun(layout, new Date('2026-11-28T02:00:00Z'), 10_000);
    expect(await clearDeadRunLocks(layout, 10_000, silentLogger)).toEqual([dead]);
    expect((await fs.readdir(layout.snapshots)).filter((n) => n.endsWith('.lock'))).toEqual([`run-${compactIso(new Date('2026-11-28T02:00:00Z'))}.lock`]);
    await release();
  });
});

describe('control documents of restarts', () => {
  it('keeps the desired schedule per queue prefix, validated', async () => {
    expect(await readDesiredSchedule(layout, 'p2ptel')).toBeNull();
    await writeDesiredSchedule(layout, { prefix: 'p2ptel', rollup: '*/5 * * * *', rollupEveryMs: 2000, reports: '0 2 * * *', compactEveryMs: 60_000 });
    await writeDesiredSchedule(layout, { prefix: 'other', rollup: '*/5 * * * *', rollupEveryMs: null, reports: '0 3 * * *', compactEveryMs: 60_000 });
    await writeDesiredSchedule(layout, { prefix: 'p2ptel', rollup: '*/5 * * * *', rollupEveryMs: 5000, reports: '0 2 * * *', compactEveryMs: 60_000 });
    expect(await readDesiredSchedule(layout, 'p2ptel')).toMatchObject({ rollupEveryMs: 5000 });
    expect(await readDesiredSchedule(layout, 'other')).toMatchObject({ rollupEveryMs: null, reports: '0 3 * * *' });
    await expect(writeDesiredSchedule(layout, { prefix: 'p2ptel', rollup: 'every minute', rollupEveryMs: null, reports: '0 2 * * *', compactEveryMs: 60_000 })).rejects.toThrow(/invalid schedule\.json/);
  });

  it('shows the same sample ingest key at every start until it is revoked', async () => {
    await addTenant(layout, { customerId: 'acme', name: 'ACME', cdnPricePerGb: null, savingsSharePct: 25 });
    const first = await sampleIngestKey(layout, 'acme', 'sample');
    expect(first.made).toBe(true);
    expect(await sampleIngestKey(layout, 'acme', 'sample')).toEqual({ key: first.key, made: false });
    expect((await fs.stat(path.join(layout.control, 'sample-ingest-key.json'))).mode & 0o777).toBe(0o600);
    await revokeIngestKey(layout, first.key);
    const next = await sampleIngestKey(layout, 'acme', 'sample');
    expect(next.made).toBe(true);
    expect(next.key).not.toBe(first.key);
  });
});
