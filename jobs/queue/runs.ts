// What happened to runs, read from the jobs BullMQ keeps: state, progress, duration, figures and
// the reason of a failure (down to the partition that failed). Used by `cli runs` and `--wait`.
import type { Job, JobState, Queue } from 'bullmq';
import type { Queues } from './client.ts';
import { JOBS, QUEUES, planJobId, reportsJobId, rollupJobId, type RunKind } from './names.ts';
import { CompactJobResult, PartitionPayload, PlanPayload, Progress, PublishPayload, PublishResult, ReportsPayload, ReportsResult, resultOf, TickResult } from './payloads.ts';
import { scheduledAsOf } from './fire-time.ts';

/**
 * The state of a run; `coalesced` and `missed` are scheduler fire times that started no run of
 * their own (ticks.ts): a tick held back while a run was in flight, fire times passed with no tick;
 * `skipped`, a compaction job that found another compaction running.
 */
export type RunState = 'queued' | 'planning' | 'running' | 'publishing' | 'retrying' | 'completed' | 'failed' | 'unknown' | 'coalesced' | 'missed' | 'skipped';

export interface RunInfo {
  /** A rollup or report run, or a compaction job (its asOf is its fire time). */
  kind: RunKind | 'compaction';
  asOf: string;
  state: RunState;
  /** 0–100, for the run as a whole. */
  percent: number;
  /** What it is doing, e.g. "2/3 jobs, 12 partitions to rebuild, 288 reused". */
  progress: string;
  /** BullMQ ids of the run's jobs (plan and flow parent, or the report job). */
  jobIds: string[];
  startedAt: number | null;
  finishedAt: number | null;
  durationMs: number | null;
  /** The run's jobs (each rebuilds the states of some date partitions of one customer). */
  partitions: { done: number; failed: number; total: number } | null;
  /** Date partitions whose state the run rebuilt / reused (null when not known). */
  partitionsRebuilt: number | null;
  partitionsReused: number | null;
  /**
   * A rebuild after a deployment that changed a state's SQL: the stale states the run still used,
   * and those it rebuilt (null: none stale, or not known).
   */
  rebuild: { staleLeft: number; rebuilt: number } | null;
  reports: number | null;
  streams: number | null;
  snapshot: string | null;
  published: boolean | null;
  error: string | null;
  note: string | null;
}

export const FINISHED: ReadonlySet<RunState> = new Set(['completed', 'failed']);

function blank(kind: RunInfo['kind'], asOf: string): RunInfo {
  return {
    kind,
    asOf,
    state: 'unknown',
    percent: 0,
    progress: '',
    jobIds: [],
    startedAt: null,
    finishedAt: null,
    durationMs: null,
    partitions: null,
    partitionsRebuilt: null,
    partitionsReused: null,
    rebuild: null,
    reports: null,
    streams: null,
    snapshot: null,
    published: null,
    error: null,
    note: null,
  };
}

function timing(info: RunInfo, startedAt: number | undefined, finishedAt: number | undefined): void {
  info.startedAt = startedAt ?? null;
  info.finishedAt = finishedAt ?? null;
  if (startedAt !== undefined) info.durationMs = (finishedAt ?? Date.now()) - startedAt;
}

/** A waiting or delayed job that already ran before is being retried, not queued. */
function waitingState(job: Job, state: string): RunState {
  if (state === 'delayed' || job.attemptsMade > 0) return 'retrying';
  return 'queued';
}

/**
 * A job and its state, the state read first: a job read before it finished but whose state is
 * read after would look finished without its result.
 */
async function jobAndState(queue: Queue, id: string): Promise<{ job: Job; state: JobState | 'unknown' } | null> {
  const state = await queue.getJobState(id);
  if (state === 'unknown') return null;
  const job = await queue.getJob(id);
  return job ? { job, state } : null;
}

export async function describeRun(queues: Queues, kind: RunKind, asOf: Date): Promise<RunInfo | null> {
  return kind === 'rollup' ? describeRollup(queues, asOf) : describeReports(queues, asOf);
}

async function describeRollup(queues: Queues, asOf: Date): Promise<RunInfo | null> {
  const [planned, flow] = await Promise.all([jobAndState(queues.rollup, planJobId(asOf)), jobAndState(queues.rollup, rollupJobId(asOf))]);
  if (!planned && !flow) return null;
  const info = blank('rollup', asOf.toISOString());
  info.jobIds = [planned?.job.id, flow?.job.id].filter((x): x is string => typeof x === 'string');
  if (!flow) return describePlanning(info, planned!);
  const { job: run, state } = flow;
  info.partitions = await partitionCounts(run);
  const result = state === 'completed' ? resultOf(PublishResult, run.returnvalue) : null;
  countPartitions(info, run, result);
  timing(info, planned?.job.processedOn ?? run.timestamp, run.finishedOn);
  return describeFlow(queues, info, flow, result);
}

/** A rollup run whose flow does not exist yet (or any more): what its plan job says. */
function describePlanning(info: RunInfo, planned: { job: Job; state: JobState | 'unknown' }): RunInfo {
  const { job: plan, state } = planned;
  timing(info, plan.processedOn, plan.finishedOn);
  if (state === 'active') Object.assign(info, { state: 'planning', percent: 2, progress: resultOf(Progress, plan.progress)?.step ?? 'planning' });
  else if (state === 'failed') Object.assign(info, { state: 'failed', progress: 'planning failed', error: plan.failedReason || 'failed' });
  else if (state === 'completed') Object.assign(info, { state: 'unknown', note: 'the run finished and its records were removed' });
  else Object.assign(info, { state: waitingState(plan, state), progress: 'waiting for a worker' });
  return info;
}

/** The flow's partition jobs: done, failed and in all. */
async function partitionCounts(run: Job): Promise<NonNullable<RunInfo['partitions']>> {
  const counts = await run.getDependenciesCount();
  const done = counts.processed ?? 0;
  const failed = counts.failed ?? 0;
  return { done, failed, total: done + failed + (counts.unprocessed ?? 0) + (counts.ignored ?? 0) };
}

/** Partitions rebuilt and reused: as planned, then as done once the run completed. */
function countPartitions(info: RunInfo, run: Job, result: PublishResult | null): void {
  const decisions = resultOf(PublishPayload, run.data)?.decisions;
  if (decisions) {
    const rebuilt = decisions.filter((d) => d.action === 'rebuild').length;
    info.partitionsRebuilt = rebuilt;
    info.partitionsReused = decisions.length - rebuilt;
    const staleLeft = decisions.filter((d) => d.reason === 'stale').length;
    const staleRebuilt = decisions.filter((d) => d.action === 'rebuild' && d.reason === 'state code changed').length;
    if (staleLeft + staleRebuilt > 0) info.rebuild = { staleLeft, rebuilt: staleRebuilt };
  }
  // What the run did, once known: a job may have reused a state another run built meanwhile.
  if (typeof result?.partitionsRebuilt === 'number' && typeof result.partitionsReused === 'number') {
    info.partitionsRebuilt = result.partitionsRebuilt;
    info.partitionsReused = result.partitionsReused;
  }
}

/** A rollup run by the state of its flow's parent (the publish job). */
async function describeFlow(queues: Queues, info: RunInfo, flow: { job: Job; state: JobState | 'unknown' }, result: PublishResult | null): Promise<RunInfo> {
  const { job: run, state } = flow;
  const { done, total } = info.partitions!;
  const partitionsLine =
    `${done}/${total} jobs` +
    (info.partitionsRebuilt === null ? '' : `, ${info.partitionsRebuilt} partitions rebuilt, ${info.partitionsReused} reused`) +
    (info.rebuild === null ? '' : `; rebuild after a deployment under way: ${info.rebuild.rebuilt} stale states rebuilt, ${info.rebuild.staleLeft} left`);
  switch (state) {
    case 'waiting-children':
      return Object.assign(info, { state: 'running', percent: 5 + (total > 0 ? (90 * done) / total : 0), progress: partitionsLine });
    case 'active':
      return Object.assign(info, { state: 'publishing', percent: 95, progress: resultOf(Progress, run.progress)?.step ?? 'publishing' });
    case 'completed':
      return Object.assign(info, { state: 'completed', percent: 100, progress: partitionsLine, ...completedFigures(result) });
    case 'failed':
      return Object.assign(info, { state: 'failed', progress: partitionsLine, error: await failureOf(queues, run) });
    default:
      return Object.assign(info, { state: waitingState(run, state) === 'retrying' ? 'retrying' : 'publishing', percent: 95, progress: partitionsLine });
  }
}

function completedFigures(r: PublishResult | null): Partial<RunInfo> {
  return {
    reports: r?.reports ?? null,
    streams: r?.streams ?? null,
    snapshot: r?.snapshot ?? null,
    published: r?.published ?? null,
    note: r && !r.published ? 'not published: a snapshot with a later asOf is current' : null,
  };
}

/** Why a run's parent failed: its own reason, or that of the partition that failed it. */
async function failureOf(queues: Queues, run: Job): Promise<string> {
  const deps = await run.getDependencies({ failed: { cursor: 0, count: 5 } });
  for (const key of deps.failed ?? []) {
    const id = key.slice(key.lastIndexOf(`:${QUEUES.partitions}:`) + QUEUES.partitions.length + 2);
    const child = await queues.partitions.getJob(id);
    if (!child) continue;
    const payload = resultOf(PartitionPayload, child.data);
    const customer = payload ? [...new Set(payload.partitions.map((p) => p.customerId))].join(',') : id;
    return `partition ${customer} failed after ${child.attemptsMade} attempt(s): ${child.failedReason}`;
  }
  return run.failedReason || 'failed';
}

async function describeReports(queues: Queues, asOf: Date): Promise<RunInfo | null> {
  const found = await jobAndState(queues.reports, reportsJobId(asOf));
  if (!found) return null;
  const { job, state } = found;
  const info = blank('reports', asOf.toISOString());
  info.jobIds = [job.id ?? ''];
  timing(info, job.processedOn, job.finishedOn);
  if (state === 'active') Object.assign(info, { state: 'running', percent: 50, progress: resultOf(Progress, job.progress)?.step ?? 'running' });
  else if (state === 'failed') Object.assign(info, { state: 'failed', error: job.failedReason || 'failed' });
  else if (state === 'completed') {
    const r = resultOf(ReportsResult, job.returnvalue);
    Object.assign(info, { state: 'completed', percent: 100, progress: 'done', note: r?.message ?? null });
  } else Object.assign(info, { state: waitingState(job, state), progress: 'waiting for a worker' });
  return info;
}

const LISTED_STATES = ['active', 'waiting', 'waiting-children', 'delayed', 'prioritized', 'completed', 'failed'] as const;

/** A row of the list: a run to describe, or a tick that started no run of its own (or a compaction job), described already. */
type Row = { kind: RunInfo['kind']; asOf: string; tick?: RunInfo };

/** The latest runs of both kinds, the fire times that started none, and compaction jobs, newest asOf first. */
export async function listRuns(queues: Queues, limit: number): Promise<RunInfo[]> {
  const rows = [
    ...(await rowsOf(queues.rollup, 'rollup', limit, (j) => (j.name === JOBS.plan || j.name === JOBS.publish ? (resultOf(PlanPayload, j.data)?.asOf ?? null) : null))),
    ...(await rowsOf(queues.reports, 'reports', limit, (j) => (j.name === JOBS.reports ? (resultOf(ReportsPayload, j.data)?.asOf ?? null) : null))),
    ...(await compactionRows(queues, limit)),
  ];
  rows.sort((a, b) => (a.asOf < b.asOf ? 1 : a.asOf > b.asOf ? -1 : a.kind.localeCompare(b.kind)));
  const runs: RunInfo[] = [];
  for (const row of rows.slice(0, limit)) {
    const info = row.tick ?? (row.kind === 'compaction' ? null : await describeRun(queues, row.kind, new Date(row.asOf)));
    if (info) runs.push(info);
  }
  return runs;
}

async function rowsOf(queue: Queue, kind: RunKind, limit: number, asOfOf: (job: Job) => string | null): Promise<Row[]> {
  const rows: Row[] = [];
  const seen = new Set<string>();
  // A few more than asked: ticks share the queue, and a run has two run-level jobs.
  for (const job of await queue.getJobs([...LISTED_STATES], 0, limit * 4)) {
    if (!job) continue;
    if (job.name === JOBS.tick) rows.push(...tickRows(kind, job));
    const asOf = asOfOf(job);
    if (asOf && !seen.has(asOf)) {
      seen.add(asOf);
      rows.push({ kind, asOf });
    }
  }
  return rows;
}

/** A tick coalesced behind a run in flight, and the fire times missed before a tick. */
function tickRows(kind: RunKind, job: Job): Row[] {
  const r = resultOf(TickResult, job.returnvalue);
  if (!r) return [];
  const rows: Row[] = [];
  const row = (asOf: string, state: RunState, note: string) => {
    const info = { ...blank(kind, asOf), state, note, jobIds: [job.id ?? ''] };
    timing(info, job.processedOn, job.finishedOn);
    rows.push({ kind, asOf, tick: info });
  };
  if (r.outcome === 'coalesced') row(r.asOf, 'coalesced', `a run was in flight (asOf ${r.behind ?? '?'}): coalesced into the next run`);
  if (r.missed) {
    const span = r.missed.count === 1 ? r.missed.first : `${r.missed.first} to ${r.missed.last}`;
    row(r.missed.first, 'missed', `${r.missed.count} fire time(s) passed with no tick (${span}): no worker took it in time`);
  }
  return rows;
}

/** Compaction jobs that ran or run, each a row as of its fire time: done (what it compacted), skipped, failed, or running. */
async function compactionRows(queues: Queues, limit: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (const job of await queues.compaction.getJobs(['active', 'completed', 'failed'], 0, limit)) {
    if (!job || job.name !== JOBS.compact) continue;
    const asOf = scheduledAsOf(job).toISOString();
    const info = { ...blank('compaction', asOf), jobIds: [job.id ?? ''] };
    timing(info, job.processedOn, job.finishedOn);
    const r = resultOf(CompactJobResult, job.returnvalue);
    if (job.finishedOn && job.failedReason) Object.assign(info, { state: 'failed', error: job.failedReason });
    else if (r?.outcome === 'skipped') Object.assign(info, { state: 'skipped', percent: 100, note: 'another compaction held the warehouse lock (compaction/compact.lock): skipped' });
    else if (r) {
      Object.assign(info, {
        state: 'completed',
        percent: 100,
        progress: `${r.partitions} partitions compacted`,
        note: `${r.files} small files merged into ${r.partitions}; ${r.retired} covered files removed`,
      });
    } else if (job.processedOn && !job.finishedOn) Object.assign(info, { state: 'running', percent: 50, progress: 'compacting' });
    // The next fire time's job, waiting: nothing happened yet.
    else continue;
    rows.push({ kind: 'compaction', asOf, tick: info });
  }
  return rows;
}
