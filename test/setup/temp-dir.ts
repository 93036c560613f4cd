// Where the test run keeps its temporary files: a folder of its own on /dev/shm when that is a
// memory filesystem with room (the suite creates and deletes tens of thousands of files: on this
// project's ext4 disk, finding a free inode among recently deleted ones took about 4 % of the
// suite's CPU time, and fsyncs waited on the disk), else the system's temporary folder. Set as
// TMPDIR before anything runs, so the test workers and every process they start inherit it. The
// folder goes at the end of the run (the default export, a global setup), and one left by a run
// that died goes at the start of the next.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processAlive } from '../../lib/process.ts';

/** Free bytes a memory filesystem must have for the run's files (the largest data sets and spills). */
const ROOM = 4 * 1024 ** 3;
const TMPFS_MAGIC = 0x01021994;

const SHM = '/dev/shm';
const PREFIX = 'p2ptel-tests-';

/** The folders of earlier runs whose process is gone. */
function removeLeftovers(): void {
  for (const name of fs.readdirSync(SHM)) {
    const pid = Number(name.startsWith(PREFIX) ? name.slice(PREFIX.length).split('-')[0] : NaN);
    if (Number.isInteger(pid) && pid !== process.pid && !processAlive(pid)) fs.rmSync(path.join(SHM, name), { recursive: true, force: true });
  }
}

export function testTempRoot(): string {
  // Vitest evaluates its config more than once in a run: the folder made the first time is kept.
  const made = process.env['TMPDIR'] ?? '';
  if (path.dirname(made) === SHM && path.basename(made).startsWith(`${PREFIX}${process.pid}-`) && fs.existsSync(made)) return made;
  try {
    const st = fs.statfsSync(SHM);
    if (st.type === TMPFS_MAGIC && st.bavail * st.bsize >= ROOM) {
      fs.accessSync(SHM, fs.constants.W_OK);
      removeLeftovers();
      return fs.mkdtempSync(path.join(SHM, `${PREFIX}${process.pid}-`));
    }
  } catch {
    // no /dev/shm here: the system's temporary folder
  }
  return os.tmpdir();
}

/** Global setup: removes the run's folder on /dev/shm at the end. */
export default function setup(): () => void {
  const dir = process.env['TMPDIR'] ?? '';
  return () => {
    if (path.dirname(dir) === SHM && path.basename(dir).startsWith(PREFIX)) fs.rmSync(dir, { recursive: true, force: true });
  };
}
