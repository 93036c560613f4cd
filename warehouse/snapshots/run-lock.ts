// One rollup run per asOf at a time: a second run of the same asOf (inline, or planned on the
// workers while an inline one runs) is refused with "already running" instead of computing the
// same snapshot twice. A file lock in the snapshots folder (lib/file-lock.ts), renewed while the
// holder lives and taken over once stale, or at once when its holder was a process of this host
// that is gone (a killed run does not block the next). Since each run has an asOf of its own, the
// lock of a killed run is never asked for again: every plan removes those it proves dead.
import fs from 'node:fs/promises';
import path from 'node:path';
import { EXIT, ExitError } from '../../lib/errors.ts';
import { LockBusyError, lockHeld, removeDeadLock, takeLock } from '../../lib/file-lock.ts';
import type { Logger } from '../../lib/log.ts';
import { compactIso } from '../../lib/time.ts';
import type { WarehouseLayout } from '../layout.ts';

export class RunAlreadyRunningError extends ExitError {
  override name = 'RunAlreadyRunningError';
  override readonly errorCode = 'run_already_running';
  constructor(asOf: Date) {
    super(`a rollup run of asOf ${asOf.toISOString()} is already running: not computed twice (wait for it, or use another --as-of)`, EXIT.alreadyRunning);
  }
}

function lockPath(layout: WarehouseLayout, asOf: Date): string {
  return path.join(layout.snapshots, `run-${compactIso(asOf)}.lock`);
}

/** Take the run lock of `asOf`, or throw RunAlreadyRunningError at once. Returns its release. */
export async function lockRun(layout: WarehouseLayout, asOf: Date, staleMs: number): Promise<() => Promise<void>> {
  await fs.mkdir(layout.snapshots, { recursive: true });
  try {
    const lock = await takeLock(lockPath(layout, asOf), { staleMs, waitMs: 0 });
    return () => lock.release();
  } catch (err) {
    if (err instanceof LockBusyError) throw new RunAlreadyRunningError(asOf);
    throw err;
  }
}

/** Whether a live run holds the lock of `asOf`. */
export async function runLocked(layout: WarehouseLayout, asOf: Date, staleMs: number): Promise<boolean> {
  return lockHeld(lockPath(layout, asOf), staleMs);
}

const RUN_LOCK_RE = /^run-[0-9TZ]+\.lock$/;

/**
 * Remove the run locks of dead runs: their holder's pid is gone on this host, or they were not
 * renewed for `staleMs` (lib/file-lock.ts). Returns the names removed.
 */
export async function clearDeadRunLocks(layout: WarehouseLayout, staleMs: number, log: Logger): Promise<string[]> {
  const names = (await fs.readdir(layout.snapshots).catch(() => [] as string[])).filter((n) => RUN_LOCK_RE.test(n));
  const removed: string[] = [];
  for (const name of names) if (await removeDeadLock(path.join(layout.snapshots, name), staleMs)) removed.push(name);
  for (const name of removed) log.info({ lock: name }, 'removed the run lock of a dead run');
  return removed;
}
