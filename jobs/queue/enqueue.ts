// Adding runs: the first job of a run has an id derived from its asOf, so adding the same run
// again is a no-op while BullMQ keeps its record. A run that failed is retried by adding it again:
// its failed jobs are removed first, then it starts over from planning.
import type { AppConfig } from '../../lib/config.ts';
import type { Queues } from './client.ts';
import { runJobOptions } from './job-options.ts';
import { JOBS, planJobId, reportsJobId, rollupJobId, type RunKind } from './names.ts';
import type { PlanPayload, ReportsPayload } from './payloads.ts';
import { describeRun, FINISHED, type RunInfo } from './runs.ts';
import { InternalError } from '../../lib/errors.ts';

export interface EnqueueOutcome {
  kind: RunKind;
  asOf: Date;
  jobId: string;
  /** added: a new run; exists: the run was already queued, running or done; retried: it had failed. */
  status: 'added' | 'exists' | 'retried';
  /** The run as it was before this call (for exists and retried). */
  before: RunInfo | null;
}

/** Removing a failed run failed because some of its jobs are still running. */
export class RunBusyError extends InternalError {
  override name = 'RunBusyError';
  override readonly errorCode = 'run_busy';
}

/** Add the first job of a run; false when a job with its id already exists. */
export async function addRunJob(queues: Queues, retry: AppConfig['jobs'], kind: RunKind, asOf: Date): Promise<{ jobId: string; added: boolean }> {
  if (kind === 'rollup') {
    const jobId = planJobId(asOf);
    if (await queues.rollup.getJob(jobId)) return { jobId, added: false };
    const data: PlanPayload = { asOf: asOf.toISOString() };
    await queues.rollup.add(JOBS.plan, data, runJobOptions(retry, jobId));
    return { jobId, added: true };
  }
  const jobId = reportsJobId(asOf);
  if (await queues.reports.getJob(jobId)) return { jobId, added: false };
  const data: ReportsPayload = { asOf: asOf.toISOString() };
  await queues.reports.add(JOBS.reports, data, runJobOptions(retry, jobId));
  return { jobId, added: true };
}

export async function enqueueRun(queues: Queues, retry: AppConfig['jobs'], kind: RunKind, asOf: Date): Promise<EnqueueOutcome> {
  const before = await describeRun(queues, kind, asOf);
  if (before?.state === 'failed') {
    await removeRun(queues, kind, asOf);
    const { jobId } = await addRunJob(queues, retry, kind, asOf);
    return { kind, asOf, jobId, status: 'retried', before };
  }
  if (before && before.state !== 'unknown') {
    return { kind, asOf, jobId: before.jobIds[0] ?? '', status: 'exists', before };
  }
  const { jobId, added } = await addRunJob(queues, retry, kind, asOf);
  return { kind, asOf, jobId, status: added ? 'added' : 'exists', before };
}

/** Remove every job of a run (a flow parent takes its children with it). */
async function removeRun(queues: Queues, kind: RunKind, asOf: Date): Promise<void> {
  const jobs =
    kind === 'rollup'
      ? [await queues.rollup.getJob(rollupJobId(asOf)), await queues.rollup.getJob(planJobId(asOf))]
      : [await queues.reports.getJob(reportsJobId(asOf))];
  for (const job of jobs) {
    if (!job) continue;
    try {
      await job.remove({ removeChildren: true });
    } catch (err) {
      throw new RunBusyError(
        `the failed ${kind} run of ${asOf.toISOString()} still has jobs running (${err instanceof Error ? err.message : String(err)}); try again once they finish`,
      );
    }
  }
}

/**
 * Poll until the run has finished (completed or failed), calling `onUpdate` on each change.
 * Polling rather than QueueEvents: it cannot miss an event that fired before it subscribed.
 */
export async function waitForRun(
  queues: Queues,
  kind: RunKind,
  asOf: Date,
  opts: { pollMs?: number; timeoutMs?: number; onUpdate?: (run: RunInfo | null) => void } = {},
): Promise<RunInfo> {
  const pollMs = opts.pollMs ?? 500;
  const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
  let last = '';
  let seen = false;
  for (;;) {
    const run = await describeRun(queues, kind, asOf);
    const sig = JSON.stringify([run?.state, run?.progress, run?.percent]);
    if (sig !== last) {
      last = sig;
      opts.onUpdate?.(run);
    }
    if (run && FINISHED.has(run.state)) return run;
    if (run && run.state !== 'unknown') seen = true;
    else if (seen) {
      // Its jobs were there and are gone: Redis restarted without persistence (docs/jobs.md).
      throw new RunVanishedError(
        `the ${kind} run of ${asOf.toISOString()} is no longer in Redis (restarted without persistence?): its outcome is unknown; ` +
          `enqueue it again (the same asOf is the same run, and a published snapshot is not published twice)`,
      );
    }
    if (Date.now() > deadline) {
      throw new WaitTimeoutError(`the ${kind} run of ${asOf.toISOString()} had not finished after ${Math.round((opts.timeoutMs ?? 0) / 1000)} s (state: ${run?.state ?? 'not found'})`);
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

export class WaitTimeoutError extends InternalError {
  override name = 'WaitTimeoutError';
  override readonly errorCode = 'wait_timeout';
}

export class RunVanishedError extends InternalError {
  override name = 'RunVanishedError';
  override readonly errorCode = 'run_vanished';
}
