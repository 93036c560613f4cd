// A spool folder on disk: its segment files and their names (unique forever: the spool's
// generation, made when a process opens it, and the segment's number), the torn tail a crash can
// leave, the pid lock that gives the folder to one collector, and the spool's id.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fsyncDir } from '../lib/fsx.ts';
import { processAlive } from '../lib/process.ts';
import { InternalError } from '../lib/errors.ts';

export class SpoolBusyError extends InternalError {
  override name = 'SpoolBusyError';
  override readonly errorCode = 'spool_busy';
}

/**
 * `seg-<generation>-<seq>.r.ndjson`; `seg-<seq>[.r].ndjson` without a generation was written by
 * collectors before generations (renamed into one when found, see `segmentNames`).
 */
export const SEGMENT_RE = /^seg-(?:(\d{13}[0-9a-f]{6})-)?(\d{12})(\.r)?\.ndjson$/;
export const segmentKey = (generation: string, seq: number) => `${generation}-${String(seq).padStart(12, '0')}`;
export const segmentName = (key: string, wrapped = true) => `seg-${key}${wrapped ? '.r' : ''}.ndjson`;

/**
 * A new generation: the time in ms (13 digits, so that names sort by age) and 6 random hex digits.
 * A process opens the spool once (pid lock), so a generation names one process's segments.
 */
export function newGeneration(): string {
  return `${String(Date.now()).padStart(13, '0')}${randomBytes(3).toString('hex')}`;
}

/**
 * The segment files of a spool folder, oldest first, every one with a generation: a segment left
 * without one (by a collector before generations) is first renamed into a generation of its own,
 * durably, so that the files it lands are named once and for all.
 */
export async function segmentNames(dir: string): Promise<string[]> {
  const names = (await fs.readdir(dir)).filter((n) => SEGMENT_RE.test(n));
  const legacy = names.filter((n) => SEGMENT_RE.exec(n)![1] === undefined);
  if (legacy.length === 0) return names.sort();
  const generation = newGeneration();
  for (const name of legacy) {
    const m = SEGMENT_RE.exec(name)!;
    await fs.rename(path.join(dir, name), path.join(dir, segmentName(segmentKey(generation, Number(m[2])), m[3] !== undefined)));
  }
  await fsyncDir(dir);
  return (await fs.readdir(dir)).filter((n) => SEGMENT_RE.test(n)).sort();
}

/**
 * Cut a segment after its last complete line: a crash during a write can leave part of a line,
 * which belonged to a request that was never answered. Returns the size kept.
 */
export async function cutTornTail(file: string): Promise<number> {
  const handle = await fs.open(file, 'r+');
  try {
    const { size } = await handle.stat();
    const chunk = Buffer.alloc(64 * 1024);
    let end = size;
    let keep = 0;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const { bytesRead } = await handle.read(chunk, 0, end - start, start);
      const nl = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (nl >= 0) {
        keep = start + nl + 1;
        break;
      }
      end = start;
    }
    if (keep < size) {
      await handle.truncate(keep);
      await handle.sync();
    }
    return keep;
  } finally {
    await handle.close();
  }
}

export const PID_FILE = 'collector.pid';
const ID_FILE = 'collector.id';

/** Spool folders this process has open (a pid file naming our own pid is stale otherwise: containers reuse pid 1). */
export const openHere = new Set<string>();

/** One collector per spool folder: a second one on the same folder is refused while the first lives. */
export async function takePidLock(dir: string): Promise<void> {
  const file = path.join(dir, PID_FILE);
  if (openHere.has(path.resolve(dir))) throw new SpoolBusyError(`spool ${dir} is already open in this process`);
  const me = `${process.pid} ${os.hostname()}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await fs.writeFile(file, me, { flag: 'wx', mode: 0o600 });
      openHere.add(path.resolve(dir));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const [pidText, host] = (await fs.readFile(file, 'utf8').catch(() => '')).trim().split(' ');
    const pid = Number(pidText);
    if (host !== undefined && host !== os.hostname()) {
      throw new SpoolBusyError(`spool ${dir} belongs to a collector on host ${host}; give each collector its own spool folder`);
    }
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
      throw new SpoolBusyError(`spool ${dir} is in use by the collector with pid ${pid}; give each collector its own spool folder`);
    }
    // Its owner is gone (killed): take it over.
    await fs.rm(file, { force: true });
  }
  throw new SpoolBusyError(`could not take the lock of spool ${dir}`);
}

export async function spoolId(dir: string): Promise<string> {
  const file = path.join(dir, ID_FILE);
  try {
    const text = (await fs.readFile(file, 'utf8')).trim();
    if (/^[a-z0-9]{16}$/.test(text)) return text;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const id = randomBytes(8).toString('hex');
  const tmp = `${file}.tmp-${process.pid}`;
  await fs.writeFile(tmp, `${id}\n`, { mode: 0o600 });
  const h = await fs.open(tmp, 'r');
  await h.sync();
  await h.close();
  await fs.rename(tmp, file);
  await fsyncDir(dir);
  return id;
}
