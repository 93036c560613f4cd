// The `snapshots` commands' work.
import fs from 'node:fs/promises';
import { z } from 'zod';
import { runtime, withJobDeps, type CommandModule } from '../runtime.ts';
import { table } from '../format.ts';
import { UserError } from '../../lib/errors.ts';
import { describeAhead } from '../../lib/time.ts';
import { buildCatalog } from '../../warehouse/publish/index.ts';
import { readSnapshotManifest } from '../../warehouse/snapshots/index.ts';
import { installCatalogFor } from '../../warehouse/publish/index.ts';
import { listPublished, snapshotFiles, SnapshotUnreadableError, useSnapshot } from '../../warehouse/snapshots/index.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import type { SettingOverrides } from '../../lib/config.ts';
import { noFlags } from '../options.ts';

/** `snapshots list`. */
export const list: CommandModule<typeof noFlags> = { Flags: noFlags, run: listCommand };

/** `snapshots use <id>`. */
const UseFlags = z.object({ id: z.string().trim().min(1, 'a snapshot id, as `snapshots list` prints it') });
export const use: CommandModule<typeof UseFlags> = { Flags: UseFlags, run: useCommand };

async function listCommand(_flags: z.output<typeof noFlags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const rows = await listPublished(warehouseLayout(rt.config.warehouseDir));
  if (rows.length === 0) {
    process.stdout.write('no snapshot folder\n');
    return;
  }
  const now = Date.now();
  const note = (r: (typeof rows)[number]) => {
    const ahead = r.asOf === null ? 0 : Date.parse(r.asOf) - now;
    return [r.current ? 'current' : '', !r.inHistory ? 'not published' : '', ahead > 0 ? `asOf ${describeAhead(ahead)} ahead of the clock` : '', r.asOf === null ? 'manifest unreadable' : '']
      .filter(Boolean)
      .join(', ');
  };
  process.stdout.write(`${table(['snapshot', 'asOf', 'note'], rows.map((r) => [r.snapshot, r.asOf ?? '', note(r)]), new Set())}\n`);
}

async function useCommand(flags: z.output<typeof UseFlags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const id = flags.id;
  const pointer = await withJobDeps(rt, async (deps) => {
    let catalogTmp: string | null = null;
    try {
      return await useSnapshot(deps.layout, id, {
        lockStaleMs: rt.config.snapshots.lockStaleMs,
        log: deps.log,
        beforeSwap: async (dir) => {
          catalogTmp = await buildCatalog(deps.db, deps.layout, dir, await readSnapshotManifest(snapshotFiles(dir).manifest));
        },
        afterSwap: async () => {
          if (catalogTmp) await installCatalogFor(deps.layout, catalogTmp, id);
        },
      });
    } catch (err) {
      if (catalogTmp) await fs.rm(catalogTmp, { force: true });
      if (err instanceof SnapshotUnreadableError) throw new UserError(`cannot use snapshot ${id}: ${err.why} (see \`p2ptel snapshots list\`)`);
      throw err;
    }
  });
  process.stdout.write(`CURRENT now names snapshot ${pointer.snapshot} (asOf ${pointer.asOf}); the API and the catalog follow it\n`);
}
