// Scratch folders of the state area (`.tmp-<pid>@<host>~…`: a state being written, a layer merge)
// whose process is gone on this host: removed by the first run of a process (after a restart is
// when a killed predecessor's are there), and by retention whenever it walks the partitions
// (state-retention.ts). Scratch of other hosts, or of older versions' unowned names, waits out
// SNAPSHOT_DEBRIS_GRACE_SECONDS as before.
import fs from 'node:fs/promises';
import path from 'node:path';
import { readdirSyncOrEmpty } from '../../lib/fsx.ts';
import type { Logger } from '../../lib/log.ts';
import { scratchOwnerDead } from '../../lib/scratch-owner.ts';
import type { WarehouseLayout } from '../layout.ts';
import { TMP_PREFIX } from './state-store.ts';

/** Whether a state-area entry is scratch of a dead process of this host. */
export function deadScratch(name: string): boolean {
  return name.startsWith(TMP_PREFIX) && scratchOwnerDead(name.slice(TMP_PREFIX.length));
}

/** Remove every dead scratch folder of the state area; returns their paths, relative to the warehouse. */
export async function removeDeadScratch(layout: WarehouseLayout, log: Logger): Promise<string[]> {
  const removed: string[] = [];
  for (const c of readdirSyncOrEmpty(layout.state).filter((n) => n.startsWith('customer='))) {
    for (const d of readdirSyncOrEmpty(path.join(layout.state, c)).filter((n) => n.startsWith('date='))) {
      const dir = path.join(layout.state, c, d);
      for (const name of readdirSyncOrEmpty(dir).filter(deadScratch)) {
        await fs.rm(path.join(dir, name), { recursive: true, force: true });
        removed.push(path.relative(layout.root, path.join(dir, name)));
      }
    }
  }
  for (const r of removed) log.info({ path: r }, 'removed scratch of a dead process');
  return removed;
}

const swept = new Set<string>();

/** removeDeadScratch, once per warehouse in this process. */
export async function removeDeadScratchOnce(layout: WarehouseLayout, log: Logger): Promise<string[]> {
  if (swept.has(layout.root)) return [];
  swept.add(layout.root);
  return removeDeadScratch(layout, log);
}
