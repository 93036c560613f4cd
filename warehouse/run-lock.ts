// One rollup run per asOf at a time: a second run of the same asOf (inline, or planned on the
// workers while an inline one runs) is refused with "already running" instead of computing the
// same snapshot twice. A file lock in the snapshots folder, refreshed while the holder lives and
// taken over once stale, or at once when its holder was a process of this host that is gone (a
// killed run does not block the next). Compactions take a lock of the same kind (tryLock).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import lockfile from 'proper-lockfile';
import { EXIT, ExitError } from '../lib/errors.ts';
import { compactIso } from '../lib/time.ts';
import type { WarehouseLayout } from './layout.ts';
import { processAlive } from '../lib/process.ts';

export class RunAlreadyRunningError extends ExitError {
  override name = 'RunAlreadyRunningError';
  constructor(asOf: Date) {
    super(`a rollup run of asOf ${asOf.toISOString()} is already running: not computed twice (wait for it, or use another --as-of)`, EXIT.alreadyRunning);
  }
}

function lockPath(layout: WarehouseLayout, asOf: Date): string {
  return path.join(layout.snapshots, `run-${compactIso(asOf)}`);
}

/** Who holds a run lock: beside proper-lockfile's lock folder (which must stay empty to be removed). */
const ownerFile = (file: string) => `${file}.owner.json`;

/** Whether the lock's holder was a process of this host that no longer runs. */
async function holderGone(file: string): Promise<boolean> {
  try {
    const owner = JSON.parse(await fs.readFile(ownerFile(file), 'utf8')) as { host?: unknown; pid?: unknown };
    return owner.host === os.hostname() && typeof owner.pid === 'number' && !processAlive(owner.pid);
  } catch {
    return false; // no owner recorded (yet): only staleness frees it
  }
}

/** Take the run lock of `asOf`, or throw RunAlreadyRunningError at once. Returns its release. */
export async function lockRun(layout: WarehouseLayout, asOf: Date, staleMs: number): Promise<() => Promise<void>> {
  await fs.mkdir(layout.snapshots, { recursive: true });
  const release = await tryLock(lockPath(layout, asOf), staleMs);
  if (release === null) throw new RunAlreadyRunningError(asOf);
  return release;
}

/**
 * Take the lock of `file` (its folder must exist), or return null at once when a live process
 * holds it. Returns its release.
 */
export async function tryLock(file: string, staleMs: number): Promise<(() => Promise<void>) | null> {
  const take = () => lockfile.lock(file, { realpath: false, stale: staleMs, retries: 0 });
  let release: () => Promise<void>;
  try {
    release = await take();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    if (!(await holderGone(file))) return null;
    // A holder killed on this host: its lock is not stale yet, but nobody holds it.
    await fs.rm(`${file}.lock`, { recursive: true, force: true });
    try {
      release = await take();
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code === 'ELOCKED') return null;
      throw again;
    }
  }
  await fs.writeFile(ownerFile(file), JSON.stringify({ host: os.hostname(), pid: process.pid })).catch(() => {});
  return async () => {
    await fs.rm(ownerFile(file), { force: true });
    await release().catch(() => {});
  };
}

/** Whether a live run holds the lock of `asOf`. */
export async function runLocked(layout: WarehouseLayout, asOf: Date, staleMs: number): Promise<boolean> {
  return lockfile.check(lockPath(layout, asOf), { realpath: false, stale: staleMs }).catch(() => false);
}
