// Scratch files of exports: one folder of this host (created 0700), files created 0600 before
// DuckDB writes into them (DuckDB's COPY keeps an existing file's mode), named by process id so
// that an API starting up can remove what a dead one left behind.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { hostScratchDir, type WarehouseLayout } from '../../warehouse/layout.ts';
import { processAlive } from '../../lib/process.ts';

const NAME = /^export-(\d+)-[0-9a-f]+$/;

export function exportScratchDir(layout: WarehouseLayout): string {
  return path.join(hostScratchDir(layout), 'exports');
}

async function ensureDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode is filtered by the umask and ignored for an existing folder: set it.
  await fs.chmod(dir, 0o700);
}

/** A new empty scratch file (mode 0600) for DuckDB to write into. */
export async function newScratchFile(layout: WarehouseLayout): Promise<string> {
  const dir = exportScratchDir(layout);
  const file = path.join(dir, `export-${process.pid}-${randomBytes(8).toString('hex')}`);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await ensureDir(dir);
    handle = await fs.open(file, 'wx', 0o600);
  }
  await handle.close();
  return file;
}

/**
 * Prepare the scratch folder at API start: create it 0700 and remove the files of processes of
 * this host that no longer run (several API processes may share a host, so only dead ones' files).
 */
export async function prepareExportScratch(layout: WarehouseLayout): Promise<string[]> {
  const dir = exportScratchDir(layout);
  await ensureDir(dir);
  const removed: string[] = [];
  for (const name of await fs.readdir(dir)) {
    const m = NAME.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    // Our own pid can only be a previous life's (a container restarts with the same pid): we made none yet.
    if (pid !== process.pid && processAlive(pid)) continue;
    await fs.rm(path.join(dir, name), { force: true });
    removed.push(name);
  }
  return removed;
}
