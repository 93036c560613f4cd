// Queue names, job names, job ids and retention of the worker tier. A run's ids derive from its
// asOf, so the same run enqueued twice is one job: BullMQ ignores an add whose id exists.
import { randomBytes } from 'node:crypto';
import type { KeepJobs } from 'bullmq';
import { compactIso } from '../../lib/time.ts';

export const QUEUES = {
  /** Run-level steps of a rollup: scheduler ticks, plan, publish (the flow's parent). */
  rollup: 'rollup',
  /** One job per customer partition of a run (the flow's children). */
  partitions: 'rollup-partition',
  /** Report runs: the pilot reports of a published snapshot, pre-rendered (jobs/pilot-reports/run.ts). */
  reports: 'reports',
  /** The compaction job of small landed files, added by its scheduler (jobs/compaction/compact.ts). */
  compaction: 'compaction',
} as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export const JOBS = {
  /** Made by a job scheduler: turns its fire time into a run (adds the run's first job). */
  tick: 'tick',
  plan: 'plan',
  publish: 'publish',
  partition: 'partition',
  reports: 'reports',
  /** Made by the compaction scheduler: one compaction of the warehouse (no run of its own). */
  compact: 'compact',
} as const;

export const SCHEDULERS = { rollup: 'rollup', reports: 'reports', compaction: 'compaction' } as const;

export type RunKind = 'rollup' | 'reports';

/**
 * The asOf as a job-id fragment: `20261120T020000000Z`. BullMQ custom ids must not contain `:`
 * nor be all digits; this has neither, sorts by time and reads back unambiguously.
 */
export function runKey(asOf: Date): string {
  return compactIso(asOf);
}

/** The run id of a rollup flow, which names its build folder (`snapshots/.build-<runId>`). */
export function rollupRunId(asOf: Date): string {
  return runKey(asOf);
}

/** The job that plans a rollup run (lists partitions, opens the build folder, adds the flow). */
export function planJobId(asOf: Date): string {
  return `plan-${runKey(asOf)}`;
}

/** The flow's parent, which publishes the snapshot: the run itself as BullMQ sees it. */
export function rollupJobId(asOf: Date): string {
  return `rollup-${runKey(asOf)}`;
}

/**
 * A partition job. Only the parent's id must be stable (it is what makes a run unique); children
 * get a fresh suffix per flow, so that a re-run never collides with records of an earlier one.
 */
export function partitionJobId(asOf: Date, customerId: string): string {
  return `part-${runKey(asOf)}-${customerId}-${randomBytes(3).toString('hex')}`;
}

export function reportsJobId(asOf: Date): string {
  return `reports-${runKey(asOf)}`;
}

const DAY_S = 24 * 3600;

/**
 * How long finished jobs stay in Redis. Run-level jobs are the history `cli runs` shows and the
 * record that makes a second enqueue of the same asOf a no-op; failed ones keep their reason for
 * a month. Partition jobs matter only until their run has published (the parent keeps their
 * results), so they go sooner.
 */
export const RETENTION: Record<'runs' | 'partitions' | 'compactions', { completed: KeepJobs; failed: KeepJobs }> = {
  runs: { completed: { age: 14 * DAY_S, count: 5000 }, failed: { age: 30 * DAY_S, count: 5000 } },
  partitions: { completed: { age: DAY_S, count: 20_000 }, failed: { age: 30 * DAY_S, count: 20_000 } },
  /** A compaction a minute: a day of them (what `runs` shows), failed ones a month. */
  compactions: { completed: { age: DAY_S, count: 1500 }, failed: { age: 30 * DAY_S, count: 1500 } },
};
