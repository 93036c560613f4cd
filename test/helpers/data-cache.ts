// Data sets that several test files build the same way, built once a test run into the run's
// cache folder (test/setup/data-cache.ts) and copied from. The first file that asks builds it
// while the others wait: two files building it at once on two cores cost each of them twice the
// time, for one result.
import fs from 'node:fs/promises';
import path from 'node:path';
import { inject } from 'vitest';
import { processAlive } from '../../lib/process.ts';

const exists = (p: string) => fs.stat(p).then(() => true, () => false);


/**
 * The folder `name` of the run's cache, made by `build` (into the folder it is given) if no file
 * of this run made it yet. While another process builds it, this one waits; a builder that died
 * leaves its claim to the next.
 */
export async function builtOnce(name: string, build: (into: string) => Promise<void>): Promise<string> {
  const ready = path.join(inject('dataCacheDir'), name);
  const claim = `${ready}.building`;
  for (;;) {
    if (await exists(ready)) return ready;
    try {
      await fs.mkdir(claim);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(await fs.readFile(path.join(claim, 'pid'), 'utf8').catch(() => ''));
      if (owner && !processAlive(owner)) await fs.rm(claim, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    try {
      await fs.writeFile(path.join(claim, 'pid'), String(process.pid));
      if (await exists(ready)) return ready;
      const staging = `${ready}.tmp-${process.pid}`;
      await fs.rm(staging, { recursive: true, force: true });
      try {
        await build(staging);
        await fs.rename(staging, ready);
      } catch (err) {
        await fs.rm(staging, { recursive: true, force: true });
        throw err;
      }
      return ready;
    } finally {
      await fs.rm(claim, { recursive: true, force: true });
    }
  }
}
