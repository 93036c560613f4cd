// BullMQ options of each kind of job: retries with exponential backoff, how long finished jobs
// are kept, and that a partition which fails for good fails its whole run.
import type { JobsOptions } from 'bullmq';
import type { AppConfig } from '../../lib/config.ts';
import { RETENTION } from './names.ts';

type RetryConfig = AppConfig['jobs'];

function retries(cfg: RetryConfig): Pick<JobsOptions, 'attempts' | 'backoff'> {
  return { attempts: cfg.attempts, backoff: { type: 'exponential', delay: cfg.backoffMs } };
}

/** Ticks, plans, publications and report runs. */
export function runJobOptions(cfg: RetryConfig, jobId?: string): JobsOptions {
  return {
    ...retries(cfg),
    ...(jobId === undefined ? {} : { jobId }),
    removeOnComplete: RETENTION.runs.completed,
    removeOnFail: RETENTION.runs.failed,
  };
}

/** A customer partition of a rollup flow. */
export function partitionJobOptions(cfg: RetryConfig, jobId: string): JobsOptions {
  return {
    ...retries(cfg),
    jobId,
    // After its last attempt, a failed partition fails the parent: nothing is published.
    failParentOnFailure: true,
    removeOnComplete: RETENTION.partitions.completed,
    removeOnFail: RETENTION.partitions.failed,
  };
}

/**
 * A compaction job (made by its scheduler): one attempt, since the next fire time is the retry,
 * and a compaction is idempotent (it does what is left).
 */
export function compactionJobOptions(): JobsOptions {
  return { attempts: 1, removeOnComplete: RETENTION.compactions.completed, removeOnFail: RETENTION.compactions.failed };
}
