// First step of a rollup run: clear what dead runs left, quarantine files outside any partition,
// open the build folder and list the customer partitions to compute.
import { beginBuild, cleanDebris } from '../../warehouse/snapshots.ts';
import { discoverLanding, quarantineFile, type QuarantinedFile } from '../../warehouse/landing.ts';
import type { JobDeps } from '../deps.ts';

export interface RollupPlan {
  runId: string;
  asOf: Date;
  customers: string[];
  /** Files outside any customer=/date= folder, quarantined by this step. */
  misplaced: QuarantinedFile[];
}

export async function planRollup(
  deps: JobDeps,
  input: { runId: string; asOf: Date; ownerPid: number | null },
): Promise<RollupPlan> {
  const { layout, config, log } = deps;
  await cleanDebris(layout, config.snapshots.debrisGraceMs, log);
  const { files, misplaced } = await discoverLanding(layout);
  const quarantined: QuarantinedFile[] = [];
  for (const m of misplaced) {
    log.warn({ file: m.relPath, reason: m.reason }, 'quarantining file');
    const q = await quarantineFile(layout, m, 'not in a partition folder', m.reason, input.runId);
    if (q) quarantined.push(q);
  }
  await beginBuild(layout, input.runId, input.ownerPid);
  const customers = [...new Set(files.map((f) => f.customerId))].sort();
  return { runId: input.runId, asOf: input.asOf, customers, misplaced: quarantined };
}
