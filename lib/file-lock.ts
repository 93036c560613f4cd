// Locks between processes on a shared file system: a lock is a small file naming its holder,
// made whole by link(2) (which fails when the file exists, on NFS too), and renewed while held by
// touching it every second. A lock whose holder was a process of this host that is gone is taken
// over at once; any other once it has not been renewed for `staleMs`. A holder whose renewal
// stalled that long may find its lock taken over: it learns so (assertHeld) and must stop before
// its next write the lock protects.
import fs from 'node:fs/promises';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { processAlive } from './process.ts';
import { InternalError } from './errors.ts';

export interface LockOptions {
  /** A lock not renewed for this long belongs to a dead process, and is taken over. */
  staleMs: number;
  /** How long to wait for a live holder before giving up (LockBusyError); 0: not at all. */
  waitMs: number;
}

export interface HeldLock {
  /** False once another process took the lock over (our renewals stalled). */
  held(): boolean;
  /** Throws LockLostError when another process took the lock over. */
  assertHeld(): void;
  release(): Promise<void>;
}

/** A live process holds the lock and did not release it within the wait. */
export class LockBusyError extends InternalError {
  override name = 'LockBusyError';
  override readonly errorCode = 'lock_busy';
  readonly code = 'ELOCKED';
}

/** The lock was taken over by another process while we thought we held it. */
export class LockLostError extends InternalError {
  override name = 'LockLostError';
  override readonly errorCode = 'lock_lost';
}

interface Holder {
  host: string;
  pid: number;
  token: string;
}

const RENEW_MS = 1000;

export async function takeLock(file: string, opts: LockOptions): Promise<HeldLock> {
  const deadline = Date.now() + opts.waitMs;
  for (let pause = 20; ; pause = Math.min(pause * 2, 200)) {
    const held = await tryCreate(file, opts.staleMs);
    if (held) return held;
    if (await takeOverIfDead(file, opts.staleMs)) continue;
    if (Date.now() >= deadline) throw new LockBusyError(`${file} is held by another process`);
    await new Promise((r) => setTimeout(r, pause));
  }
}

/** Whether a live process holds the lock (it exists, is renewed, and its holder runs). */
export async function lockHeld(file: string, staleMs: number): Promise<boolean> {
  const seen = await readLock(file);
  return seen !== null && !deadHolder(seen, staleMs);
}

/**
 * Remove a lock whose holder is dead (what takeLock would take over), so that locks nobody will
 * ask for again (a killed run's, named by its asOf) do not stay. True when it was dead and removed.
 */
export async function removeDeadLock(file: string, staleMs: number): Promise<boolean> {
  const seen = await readLock(file);
  if (seen === null || !deadHolder(seen, staleMs)) return false;
  return takeOverIfDead(file, staleMs);
}

/** The lock file made whole at once: our record written aside, then linked into place. */
async function tryCreate(file: string, staleMs: number): Promise<HeldLock | null> {
  const me: Holder = { host: os.hostname(), pid: process.pid, token: randomBytes(8).toString('hex') };
  const tmp = `${file}.${me.token}.tmp`;
  await fs.writeFile(tmp, JSON.stringify(me));
  try {
    await fs.link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw err;
  } finally {
    await fs.rm(tmp, { force: true });
  }
  return heldLock(file, me, staleMs);
}

function heldLock(file: string, me: Holder, staleMs: number): HeldLock {
  let lost: string | null = null;
  let released = false;
  let renewed = Date.now();
  let renewing: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const next = () => {
    timer = setTimeout(() => {
      renewing = renew(file, me).then(
        () => {
          renewed = Date.now();
        },
        (err: unknown) => {
          // Ours no more; or a renewal failing for longer than staleMs (others may take it now).
          if (err instanceof LockLostError || Date.now() - renewed > staleMs) lost ??= (err as Error).message;
        },
      );
      void renewing.then(() => {
        if (!released && lost === null) next();
      });
    }, Math.min(RENEW_MS, Math.floor(staleMs / 4)));
    timer.unref();
  };
  next();
  return {
    held: () => lost === null,
    assertHeld() {
      if (lost !== null) throw new LockLostError(`lost the lock ${file}: ${lost}`);
    },
    async release() {
      released = true;
      clearTimeout(timer);
      await renewing;
      if (lost === null && (await readLock(file))?.holder?.token === me.token) await fs.rm(file, { force: true });
    },
  };
}

/** Touch the lock, once sure it is still ours. */
async function renew(file: string, me: Holder): Promise<void> {
  const seen = await readLock(file);
  if (seen?.holder?.token !== me.token) throw new LockLostError(seen ? 'taken over by another process' : 'removed');
  const now = new Date();
  await fs.utimes(file, now, now);
}

interface SeenLock {
  /** Null when the file holds no readable record (being written, or a foreign lock). */
  holder: Holder | null;
  mtimeMs: number;
}

async function readLock(file: string): Promise<SeenLock | null> {
  try {
    const { mtimeMs } = await fs.stat(file);
    const holder = await fs.readFile(file, 'utf8').then(
      (text) => JSON.parse(text) as Holder,
      () => null,
    );
    return { holder: holder && typeof holder.token === 'string' ? holder : null, mtimeMs };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Not renewed for staleMs, or held by a process of this host that no longer runs. */
function deadHolder(seen: SeenLock, staleMs: number): boolean {
  if (Date.now() - seen.mtimeMs > staleMs) return true;
  const h = seen.holder;
  return h !== null && h.host === os.hostname() && h.pid !== process.pid && !processAlive(h.pid);
}

/**
 * Take a dead holder's lock away: rename it aside (one process succeeds), check that what was
 * renamed is the lock judged dead, and remove it; a lock renewed or replaced meanwhile goes back.
 */
async function takeOverIfDead(file: string, staleMs: number): Promise<boolean> {
  const seen = await readLock(file);
  if (seen === null) return true; // released meanwhile: try again at once
  if (!deadHolder(seen, staleMs)) return false;
  const claim = `${file}.${randomBytes(8).toString('hex')}.claim`;
  try {
    await fs.rename(file, claim);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
  const claimed = await readLock(claim);
  if (claimed !== null && (claimed.holder?.token !== seen.holder?.token || !deadHolder(claimed, staleMs))) {
    await fs.link(claim, file).catch(() => {});
  }
  await fs.rm(claim, { recursive: true, force: true });
  return true;
}
