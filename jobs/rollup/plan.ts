// First step of a rollup run: clear what dead runs left, quarantine files outside any partition,
// open the build folder, and decide for every (customer, date) partition whether its state is
// reused or rebuilt (and why); the partitions to rebuild are grouped into batches, the jobs of
// the run.
import { beginBuild, cleanDebris } from '../../warehouse/snapshots/index.ts';
import { clearDeadRunLocks } from '../../warehouse/snapshots/index.ts';
import { removeDeadScratchOnce } from '../../warehouse/states/index.ts';
import { discoverLanding, quarantineFile, type LandedFile, type QuarantinedFile } from '../../warehouse/landing/index.ts';
import { decidePartition, partitionKey, readStates, stateInput, type PartitionDecision, type StateMeta } from '../../warehouse/states/index.ts';
import { supersededPrunable } from '../../warehouse/states/index.ts';
import type { JobDeps } from '../deps.ts';

/**
 * Partitions rebuilt by one job: about a month of one customer, so that a job's memory does not
 * grow with history, while a run whose changes are small (a new hour for every customer) pays
 * its fixed costs once.
 */
export const PARTITIONS_PER_BATCH = 31;

export interface PartitionBatch {
  partitions: { customerId: string; date: string }[];
}

export interface RollupPlan {
  runId: string;
  asOf: Date;
  customers: string[];
  /** Files outside any customer=/date= folder, quarantined by this step. */
  misplaced: QuarantinedFile[];
  /** Every partition with landed files, reused or rebuilt. */
  decisions: PartitionDecision[];
  /** The partitions to rebuild, grouped into jobs of similar size. */
  batches: PartitionBatch[];
  /** The states the plan chose to reuse. */
  reused: StateMeta[];
  /**
   * Whether retention may find something to remove: a partition is rebuilt (its old state will be
   * superseded), a partition has states but no file any more, or some partition holds a state
   * it does not use whose successor is older than the grace time (superseded earlier; younger ones are kept).
   */
  pruneNeeded: boolean;
}

/** What dead runs and processes left: build folders, scratch, run locks. */
async function clearDebris({ layout, config, log }: JobDeps): Promise<void> {
  await cleanDebris(layout, config.snapshots.debrisGraceMs, log);
  await clearDeadRunLocks(layout, config.snapshots.lockStaleMs, log);
  await removeDeadScratchOnce(layout, log);
}

export async function planRollup(
  deps: JobDeps,
  input: {
    runId: string;
    asOf: Date;
    ownerPid: number | null;
    rebuild?: boolean;
    /**
     * 'per-customer' (the worker tier): a job never mixes customers, so a run whose changes are
     * spread over customers spreads over workers. 'merged' (one process): small changes of many
     * customers make one job, which pays the fixed costs of a job once.
     */
    batching?: 'per-customer' | 'merged';
  },
): Promise<RollupPlan> {
  const { layout, config, log } = deps;
  await clearDebris(deps);
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
    const list = byPartition.get(key);
    if (list) list.push(f);
    else byPartition.set(key, [f]);
  }
  const states = await readStates(layout);
  const decisions = [...byPartition.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, list]) =>
      decidePartition(list[0]!.customerId, list[0]!.date, list.map((f) => stateInput(f)), states.get(key), input.rebuild === true, input.asOf),
    );
  const rebuild = decisions.filter((d) => d.action === 'rebuild').map(({ customerId, date }) => ({ customerId, date }));
  const groups = input.batching === 'merged' ? [rebuild] : customers.map((c) => rebuild.filter((p) => p.customerId === c));
  const batches: PartitionBatch[] = [];
  for (const group of groups) {
    // Decisions are sorted by customer then date: consecutive slices keep a customer's days together.
    const jobs = Math.ceil(group.length / PARTITIONS_PER_BATCH);
    for (let j = 0; j < jobs; j++) {
      batches.push({ partitions: group.slice(Math.floor((j * group.length) / jobs), Math.floor(((j + 1) * group.length) / jobs)) });
    }
  }
  const rebuilt = decisions.filter((d) => d.action === 'rebuild').length;
  log.info({ partitions: decisions.length, rebuilt, reused: decisions.length - rebuilt, jobs: batches.length }, 'run planned');
  const reused = decisions.flatMap((d) => (states.get(partitionKey(d.customerId, d.date)) ?? []).filter((m) => m.stateId === d.stateId));
  // A superseded state is removed once its successor is older than the grace time (pruneStates):
  // until then a run with nothing rebuilt has nothing to prune, and does not walk every state looking.
  const pruneNeeded =
    rebuild.length > 0 ||
    [...states.keys()].some((k) => !byPartition.has(k)) ||
    supersededPrunable(states, new Set(reused), config.snapshots.stateSupersededGraceMs);
  return { runId: input.runId, asOf: input.asOf, customers, misplaced: quarantined, decisions, batches, reused, pruneNeeded };
}
