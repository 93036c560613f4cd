// First step of a rollup run: clear what dead runs left, quarantine files outside any partition,
// open the build folder, and decide for every (customer, date) partition whether its state is
// reused or rebuilt (and why); the partitions to rebuild are grouped into batches, the jobs of
// the run.
import { beginBuild, cleanDebris } from '../../warehouse/snapshots.ts';
import { discoverLanding, quarantineFile, type LandedFile, type QuarantinedFile } from '../../warehouse/landing.ts';
import { decidePartition, partitionKey, readStates, stateInput, type PartitionDecision } from '../../warehouse/state-store.ts';
import type { JobDeps } from '../deps.ts';

/** Dates of one customer rebuilt by one job: a month, so that a job's memory does not grow with history. */
export const DATES_PER_BATCH = 31;

export interface PartitionBatch {
  customerId: string;
  dates: string[];
}

export interface RollupPlan {
  runId: string;
  asOf: Date;
  customers: string[];
  /** Files outside any customer=/date= folder, quarantined by this step. */
  misplaced: QuarantinedFile[];
  /** Every partition with landed files, reused or rebuilt. */
  decisions: PartitionDecision[];
  /** The partitions to rebuild, as jobs. */
  batches: PartitionBatch[];
}

export async function planRollup(
  deps: JobDeps,
  input: { runId: string; asOf: Date; ownerPid: number | null; rebuild?: boolean },
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
  const byPartition = new Map<string, LandedFile[]>();
  for (const f of files) {
    const key = partitionKey(f.customerId, f.date);
    byPartition.set(key, [...(byPartition.get(key) ?? []), f]);
  }
  const states = await readStates(layout);
  const decisions = [...byPartition.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, list]) =>
      decidePartition(list[0]!.customerId, list[0]!.date, list.map(stateInput), states.get(key), input.rebuild === true),
    );
  const batches: PartitionBatch[] = [];
  for (const c of customers) {
    const dates = decisions.filter((d) => d.customerId === c && d.action === 'rebuild').map((d) => d.date);
    for (let i = 0; i < dates.length; i += DATES_PER_BATCH) batches.push({ customerId: c, dates: dates.slice(i, i + DATES_PER_BATCH) });
  }
  const rebuilt = decisions.filter((d) => d.action === 'rebuild').length;
  log.info({ partitions: decisions.length, rebuilt, reused: decisions.length - rebuilt, jobs: batches.length }, 'run planned');
  return { runId: input.runId, asOf: input.asOf, customers, misplaced: quarantined, decisions, batches };
}
