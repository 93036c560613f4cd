// Locks between processes (lib/file-lock.ts), on real files and real processes: exclusive,
// renewed while held (never judged stale under a live holder), taken over at once from a killed
// holder of this host, taken over from a stalled one (which learns it lost the lock), and
// compatible with the folders of the locks of earlier versions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LockBusyError, LockLostError, lockHeld, takeLock } from '../../lib/file-lock.ts';
import { fixtureArgv } from '../helpers/fixtures.ts';

const STALE_MS = 2000;
let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'file-lock-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** A child process holding the lock `file`, once it has said so. */
async function holderProcess(file: string) {
  const child = spawn(process.execPath, fixtureArgv('hold-lock.ts', file, String(STALE_MS)), {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('HELD') && resolve());
    child.once('exit', (code) => reject(new Error(`lock holder exited (${code}) before holding`)));
  });
  return child;
}

describe('file locks', () => {
  it('are exclusive, and free again once released', async () => {
    const file = path.join(dir, 'a.lock');
    const first = await takeLock(file, { staleMs: STALE_MS, waitMs: 0 });
    await expect(takeLock(file, { staleMs: STALE_MS, waitMs: 0 })).rejects.toBeInstanceOf(LockBusyError);
    expect(await lockHeld(file, STALE_MS)).toBe(true);
    await first.release();
    expect(await lockHeld(file, STALE_MS)).toBe(false);
    const again = await takeLock(file, { staleMs: STALE_MS, waitMs: 0 });
    await again.release();
    expect(await fs.readdir(dir)).toEqual([]);
  });

  it('are renewed while held: a live holder is never judged stale', async () => {
    const file = path.join(dir, 'b.lock');
    const holder = await holderProcess(file);
    await new Promise((r) => setTimeout(r, STALE_MS * 1.5));
    await expect(takeLock(file, { staleMs: STALE_MS, waitMs: 500 })).rejects.toBeInstanceOf(LockBusyError);
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
  });

  it('are taken over at once from a holder of this host that was killed', async () => {
    const file = path.join(dir, 'c.lock');
    const holder = await holderProcess(file);
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
    const started = Date.now();
    const lock = await takeLock(file, { staleMs: 60_000, waitMs: 5000 });
    expect(Date.now() - started).toBeLessThan(1000);
    await lock.release();
  });

  it('are taken over from a holder that stopped renewing, which learns that it lost its lock', async () => {
    const file = path.join(dir, 'd.lock');
    const stalled = await takeLock(file, { staleMs: STALE_MS, waitMs: 0 });
    // What a holder whose renewals stalled for longer than staleMs leaves: an old lock.
    const past = new Date(Date.now() - 2 * STALE_MS);
    await fs.utimes(file, past, past);
    const taker = await takeLock(file, { staleMs: STALE_MS, waitMs: 0 });
    await new Promise((r) => setTimeout(r, STALE_MS / 2));
    expect(() => stalled.assertHeld()).toThrow(LockLostError);
    // Its release leaves the new holder's lock alone.
    await stalled.release();
    expect(await lockHeld(file, STALE_MS)).toBe(true);
    taker.assertHeld();
    await taker.release();
  });

  it("takes over an earlier version's lock folder once it is stale, and waits while it is renewed", async () => {
    const file = path.join(dir, 'e.lock');
    await fs.mkdir(file);
    await expect(takeLock(file, { staleMs: STALE_MS, waitMs: 0 })).rejects.toBeInstanceOf(LockBusyError);
    const past = new Date(Date.now() - 2 * STALE_MS);
    await fs.utimes(file, past, past);
    const lock = await takeLock(file, { staleMs: STALE_MS, waitMs: 0 });
    expect((await fs.stat(file)).isFile()).toBe(true);
    await lock.release();
  });
});
