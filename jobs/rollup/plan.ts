// First step of a rollup run: clear what dead runs left, quarantine files outside any partition,
// open the build folder, and decide for every (customer, date) partition whether its state is
// reused or rebuilt (and why); the partitions to rebuild are grouped into batches, the jobs of
// the run. After a deployment that changed a state's SQL (same layout), stale states are reused
// and a few of them rebuilt by each run (`staleToRebuild`), so that runs keep their pace.
import { beginBuild, cleanDebris } from '../../warehouse/snapshots/index.ts';
import { clearDeadRunLocks } from '../../warehouse/snapshots/index.ts';
import { removeDeadScratchOnce } from '../../warehouse/states/index.ts';
import { discoverLanding, quarantineFile, type LandedFile, type QuarantinedFile } from '../../warehouse/landing/index.ts';
import { decidePartition, partitionKey, readStates, stateInput, type PartitionDecision, type StateMeta } from '../../warehouse/states/index.ts';
import { supersededPrunable } from '../../warehouse/states/index.ts';
import type { JobDeps } from '../deps.ts';
import { STALE_REBUILT_REASON } from './rebuild-metrics.ts';

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

/** How many stale partitions a run rebuilds at most (settings ROLLUP_REBUILD_BUDGET, ROLLUP_REBUILD_BUDGET_REPORTS). */
export interface RebuildBudget {
  /** 0: every one (the run publishes once none is stale). */
  budgetPartitions: number;
  /** The reports they hold together, past the first one. */
  budgetReports: number;
}

/**
 * The stale partitions (reused as `stale`: state of other SQL, same layout) that this run
 * rebuilds: asOf's date first, then customer by customer, newest first (`staleInOrder`), within the budget. A partition is a unit
 * (rebuilt whole), so the first one is taken whatever its size.
 */
export function staleToRebuild(
  decisions: readonly PartitionDecision[],
  states: ReadonlyMap<string, readonly StateMeta[]>,
  asOf: Date,
  budget: RebuildBudget,
): Set<PartitionDecision> {
  if (budget.budgetPartitions === 0) return new Set(decisions.filter((d) => d.reason === 'stale'));
  const stale = staleInOrder(decisions, asOf);
  const picked = new Set<PartitionDecision>();
  let reports = 0;
  for (const d of stale) {
    if (picked.size >= budget.budgetPartitions) break;
    const n = states.get(partitionKey(d.customerId, d.date))?.find((m) => m.stateId === d.stateId)?.reports ?? 0;
    if (picked.size > 0 && reports + n > budget.budgetReports) break;
    picked.add(d);
    reports += n;
  }
  return picked;
}

/**
 * The stale partitions of `decisions` in the order they are rebuilt: asOf's date first, then
 * customer by customer, each customer's dates newest first. Customer by customer, not date by
 * date: what a snapshot derives from a customer's states beside them (its older days' compacted
 * hour pieces, its class units' session classes, its series blocks: window-pieces.ts,
 * class-units.ts, series-blocks.ts) is made again by the next run whenever one of that customer's
 * states changes, so that a step (or a run's budget) of one customer's days makes the next run
 * redo one customer's, where the newest date across every customer made it redo up to a step's
 * count of customers' (docs/benchmarks.md, "rebuild after a deployment, part 3").
 */
export function staleInOrder<D extends Pick<PartitionDecision, 'customerId' | 'date' | 'reason'>>(decisions: readonly D[], asOf: Date): D[] {
  const today = asOf.toISOString().slice(0, 10);
  const rank = (d: D) => (d.date === today ? 0 : 1);
  return decisions
    .filter((d) => d.reason === 'stale')
    .sort((a, b) => rank(a) - rank(b) || compare(a.customerId, b.customerId) || compare(b.date, a.date));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What dead runs and processes left: build folders, scratch, run locks. */
async function clearDebris({ layout, config, log }: JobDeps): Promise<void> {
  await cleanDebris(layout, config.snapshots.debrisGraceMs, log);
  await clearDeadRunLocks(layout, config.snapshots.lockStaleMs, log);
  await removeDeadScratchOnce(layout, log);
}

/** Landed files grouped by their partition (`partitionKey`), in the order found. */
export function filesByPartition(files: readonly LandedFile[]): Map<string, LandedFile[]> {
  const byPartition = new Map<string, LandedFile[]>();
  for (const f of files) {
    const key = partitionKey(f.customerId, f.date);
    const list = byPartition.get(key);
    if (list) list.push(f);
    else byPartition.set(key, [f]);
  }
  return byPartition;
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
    /**
     * False: this run rebuilds no stale state (they all serve as they are): `start`'s background
     * rebuild (jobs/live-rebuild.ts) replaces them off the runs' path. Default true: a budget of
     * them (ROLLUP_REBUILD_BUDGET), or all of them with a budget of 0.
     */
    rebuildStale?: boolean;
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
  const byPartition = filesByPartition(files);
  const states = await readStates(layout);
  const decided = [...byPartition.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, list]) =>
      decidePartition(list[0]!.customerId, list[0]!.date, list.map((f) => stateInput(f)), states.get(key), input.rebuild === true, input.asOf, true),
    );
  const picked = input.rebuildStale === false ? new Set<PartitionDecision>() : staleToRebuild(decided, states, input.asOf, config.rebuild);
  const decisions = decided.map((d): PartitionDecision => (picked.has(d) ? { ...d, action: 'rebuild', reason: STALE_REBUILT_REASON, stateId: null } : d));
  if (picked.size > 0) {
    log.info({ rebuilding: picked.size, staleLeft: decided.filter((d) => d.reason === 'stale').length - picked.size }, 'rebuilding stale states (state code changed)');
  }
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
