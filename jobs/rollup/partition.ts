// One job of a rollup run: rebuild the states of a batch of (customer, date) partitions from
// their landed files, one build of a partition at a time across runs and processes: a job that
// finds a partition being built waits, then reuses the state built meanwhile when it describes the
// files as they are now (another run's, or an earlier attempt of this job's). Idempotent: a retry
// builds fresh states or reuses its own, never touching a published snapshot.
import { discoverLanding, type LandedFile } from '../../warehouse/landing/index.ts';
import { buildPartitionStates, type PartitionToBuild } from '../../warehouse/states/index.ts';
import { buildLayeredState, isLayeredDate } from '../../warehouse/states/index.ts';
import { partitionFolder, readRecordsSync } from '../../warehouse/landing/index.ts';
import { withPartitionLocks } from '../../warehouse/states/index.ts';
import { decidePartition, partitionKey, readStates, stateInput, stateVersion, type PartitionDecision, type StateMeta } from '../../warehouse/states/index.ts';
import type { JobDeps } from '../deps.ts';

export interface BatchResult {
  partitions: PartitionToBuild[];
  /** States this job built. */
  states: StateMeta[];
  /** States it reused instead: built meanwhile (another run's) for the files as they are now. */
  reused: StateMeta[];
  durationMs: number;
}

/** A partition another build holds is waited for this long at most: longer, it is stuck; this attempt fails (and is retried). */
const BUILD_WAIT_MS = 30 * 60_000;

export async function rollupPartition(
  deps: JobDeps,
  /** `rebuild`: build every partition, never reuse a state (`pipeline --rebuild`). */
  input: { runId: string; asOf: Date; partitions: PartitionToBuild[]; rebuild?: boolean },
): Promise<BatchResult> {
  const started = Date.now();
  const { db, layout, config } = deps;
  const log = deps.log.child({ runId: input.runId });
  return withPartitionLocks(layout, input.partitions, { staleMs: config.snapshots.lockStaleMs, waitMs: BUILD_WAIT_MS }, async () => {
    // The files as they are now: a file that landed since the plan is read too (the state records
    // exactly what it read).
    const wanted = new Set(input.partitions.map((p) => partitionKey(p.customerId, p.date)));
    const landed = (await discoverLanding(layout, input.partitions)).files.filter((f) => wanted.has(partitionKey(f.customerId, f.date)));
    const reused = input.rebuild === true ? [] : await builtMeanwhile(deps, input.partitions, landed, input.asOf);
    const toBuild = input.partitions.filter((p) => !reused.some((m) => m.customerId === p.customerId && m.date === p.date));
    // Recent days are layered (a new file adds a layer) once they have a state of this code to
    // layer on; older days, and recent ones without such a state (a full run: a new warehouse, a
    // restore, a rebuild, new state code), are built whole in one batch: a layer of a whole day
    // costs about twice the whole build (its reports written sorted by ts), and the next run that
    // adds to the day makes its layered state.
    const known = input.rebuild === true ? new Map<string, StateMeta[]>() : await readStates(layout);
    const layered = toBuild.filter((p) => isLayeredDate(p.date, input.asOf) && hasStateToLayerOn(known.get(partitionKey(p.customerId, p.date))));
    const whole = toBuild.filter((p) => !layered.includes(p));
    const inBuild = new Set(whole.map((p) => partitionKey(p.customerId, p.date)));
    const ofPartition = (p: PartitionToBuild) => landed.filter((f) => f.customerId === p.customerId && f.date === p.date);
    const states =
      whole.length === 0
        ? []
        : await db.withSession((s) => buildPartitionStates({ s, layout, runId: input.runId, log }, whole, landed.filter((f) => inBuild.has(partitionKey(f.customerId, f.date)))));
    if (layered.length > 0) {
      const records = readRecordsSync(layout, layered.map((p) => partitionFolder(p.customerId, p.date)));
      for (const p of layered) {
        const prev = (known.get(partitionKey(p.customerId, p.date)) ?? [])[0] ?? null;
        states.push(await db.withSession((s) => buildLayeredState({ s, layout, runId: input.runId, log }, p, ofPartition(p), prev, records, input.asOf)));
      }
    }
    const durationMs = Date.now() - started;
    log.info(
      { partitions: toBuild.length, appended: states.filter((m) => m.made === 'appended').length, reused: reused.length, reports: states.reduce((a, m) => a + m.reports, 0), files: states.reduce((a, m) => a + m.files.length, 0), ms: durationMs },
      'partition states built',
    );
    return { partitions: input.partitions, states, reused, durationMs };
  });
}

/** Whether a recent partition's states hold one of this code (its newest such): then its build is layered on it. */
function hasStateToLayerOn(states: readonly StateMeta[] | undefined): boolean {
  return (states ?? []).some((m) => m.stateVersion === stateVersion());
}

/** The partitions whose newest state describes their files as they are now (built since the plan, which found none). */
async function builtMeanwhile(deps: JobDeps, partitions: readonly PartitionToBuild[], landed: readonly LandedFile[], asOf: Date): Promise<StateMeta[]> {
  const states = await readStates(deps.layout);
  return partitions.flatMap(({ customerId, date }) => {
    const key = partitionKey(customerId, date);
    const files = landed.filter((f) => f.customerId === customerId && f.date === date).map((f) => stateInput(f));
    const d = decidePartition(customerId, date, files, states.get(key), false, asOf);
    return d.action === 'reuse' ? (states.get(key) ?? []).filter((m) => m.stateId === d.stateId) : [];
  });
}

/** The plan's decisions, each partition whose state a job reused (built meanwhile) turned into a reuse of that state. */
export function withReused(decisions: readonly PartitionDecision[], reused: readonly Pick<StateMeta, 'customerId' | 'date' | 'stateId'>[]): PartitionDecision[] {
  const stateOf = new Map(reused.map((m) => [partitionKey(m.customerId, m.date), m.stateId]));
  return decisions.map((d) => {
    const stateId = stateOf.get(partitionKey(d.customerId, d.date));
    return stateId !== undefined && d.action === 'rebuild' ? { ...d, action: 'reuse', reason: null, stateId } : d;
  });
}
