// Names of scratch folders that say which process made them (`<pid>@<host>~<rest>`), so that the
// scratch of a killed process is proved dead at once (its pid is gone on this host) instead of
// waiting out a grace time. Another host's scratch is judged by its age alone.
import os from 'node:os';
import { processAlive } from './process.ts';

/** This host's name as scratch names carry it (no `~`, `@` or path separator). */
function hostTag(): string {
  return os.hostname().replace(/[^A-Za-z0-9._-]/g, '_');
}

/** `rest` prefixed with this process's pid and host. */
export function ownedScratchName(rest: string): string {
  return `${process.pid}@${hostTag()}~${rest}`;
}

/** Whether a scratch name (after its prefix) names a process of this host that is gone; false for any other name. */
export function scratchOwnerDead(name: string): boolean {
  const m = /^(\d+)@([A-Za-z0-9._-]+)~/.exec(name);
  if (!m) return false;
  const pid = Number(m[1]);
  return m[2] === hostTag() && pid !== process.pid && !processAlive(pid);
}
