// Job payloads and results as zod schemas: a worker validates what it takes off a queue (a job
// may have been written by another version of the code, or by hand), and readers of results
// (`cli runs`, `enqueue --wait`) validate what they read back.
import { UnrecoverableError, type Job } from 'bullmq';
import { z, type ZodType } from 'zod';
import { CUSTOMER_ID_PATTERN } from '../../warehouse/ids.ts';
import { QuarantinedSchema } from '../../warehouse/snapshots/index.ts';
import type { PartitionDecision } from '../../warehouse/states/index.ts';
import { describeZodError } from '../../lib/errors.ts';
import { parseIsoInstant } from '../../lib/time.ts';

/** An instant as ISO 8601 UTC, e.g. 2026-11-20T02:00:00.000Z, read strictly (lib/time.ts). */
const isoInstant = z.iso.datetime().refine((s) => parseIsoInstant(s) !== null, 'not a real instant');
const customerId = z.string().regex(CUSTOMER_ID_PATTERN, 'a customer id');
/** Runs name folders (`snapshots/.build-<runId>`): nothing that could leave the folder. */
const runId = z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'a run id');

/** Added by a job scheduler: no data; its fire time is the run's asOf. */
export const TickPayload = z.object({});

export const PlanPayload = z.object({ asOf: isoInstant });
export type PlanPayload = z.infer<typeof PlanPayload>;

const date = z.iso.date();

/** One job of a run: the (customer, date) partitions whose states it rebuilds. */
export const PartitionPayload = z.object({
  runId,
  asOf: isoInstant,
  partitions: z.array(z.object({ customerId, date })).min(1),
});
export type PartitionPayload = z.infer<typeof PartitionPayload>;

export const PublishPayload = z.object({
  runId,
  asOf: isoInstant,
  customers: z.array(customerId),
  misplaced: z.array(QuarantinedSchema),
  /** Every partition of the plan, reused (with its state) or rebuilt (with why). */
  decisions: z.array(
    z.object({
      customerId,
      date,
      action: z.enum(['reuse', 'rebuild']),
      reason: z.string().nullable() as z.ZodType<PartitionDecision['reason']>,
      stateId: z.string().nullable(),
    }),
  ),
  /** When planning started (ms since the epoch): the run's duration counts from it. */
  startedAt: z.number().int().nonnegative(),
});
export type PublishPayload = z.infer<typeof PublishPayload>;

export const ReportsPayload = z.object({ asOf: isoInstant });
export type ReportsPayload = z.infer<typeof ReportsPayload>;

export const TickResult = z.object({
  kind: z.enum(['rollup', 'reports']),
  asOf: isoInstant,
  /** The first job of the run it started; null when it started none (coalesced). */
  jobId: z.string().nullable(),
  /**
   * started: the run of its fire time; coalesced: a run was in flight; idle: nothing landed since
   * a snapshot younger than ROLLUP_IDLE_SECONDS (absent in results of older versions: started).
   */
  outcome: z.enum(['started', 'coalesced', 'idle']).optional(),
  /** The asOf of the run in flight it was coalesced behind. */
  behind: isoInstant.nullable().optional(),
  /** Fire times that passed before it with no tick (no worker took it in time). */
  missed: z.object({ count: z.number().int().positive(), first: isoInstant, last: isoInstant }).nullable().optional(),
});
export type TickResult = z.infer<typeof TickResult>;

export const PlanResult = z.object({
  runId,
  asOf: isoInstant,
  rollupJobId: z.string(),
  /** False when the run's flow already existed (a retried plan, or a duplicate). */
  created: z.boolean(),
  customers: z.number().int().nonnegative(),
});
export type PlanResult = z.infer<typeof PlanResult>;

export const PartitionResult = z.object({
  /** Customers of the partitions the job rebuilt, comma-separated. */
  customerId: z.string(),
  /** Date partitions whose states the job rebuilt. */
  partitions: z.number().optional(),
  reports: z.number(),
  streams: z.number(),
  files: z.number(),
  quarantined: z.number(),
  durationMs: z.number(),
  /** Worker (host#pid) that computed it. */
  worker: z.string(),
  /** Partitions whose state the job found built meanwhile (by another run) and reused instead (absent in results of older versions). */
  reused: z.array(z.object({ customerId, date, stateId: z.string() })).optional(),
});
export type PartitionResult = z.infer<typeof PartitionResult>;

export const PublishResult = z.object({
  runId,
  asOf: isoInstant,
  /** Null only when an earlier attempt's snapshot was discarded for a later asOf and is gone. */
  snapshot: z.string().nullable(),
  /** False when a snapshot with a later asOf was current; this one was then discarded. */
  published: z.boolean(),
  /** True when an earlier attempt of this job had already published (it died before saying so). */
  alreadyPublished: z.boolean(),
  reports: z.number().nullable(),
  streams: z.number().nullable(),
  files: z.number().nullable(),
  quarantined: z.number().nullable(),
  /** Date partitions whose state was reused / rebuilt (absent in results of older versions). */
  partitionsReused: z.number().nullable().optional(),
  partitionsRebuilt: z.number().nullable().optional(),
});
export type PublishResult = z.infer<typeof PublishResult>;

/** What a job says about itself while it runs (`job.updateProgress`), shown by `cli runs`. */
export const Progress = z.object({ percent: z.number().min(0).max(100), step: z.string() });
export type Progress = z.infer<typeof Progress>;

export const ReportsResult = z.object({
  asOf: isoInstant,
  snapshot: z.string().nullable(),
  customers: z.number(),
  rendered: z.number(),
  unchanged: z.number(),
  reports: z.number(),
  message: z.string(),
});
export type ReportsResult = z.infer<typeof ReportsResult>;

/** Added by the compaction scheduler: no data; the whole warehouse is compacted. */
export const CompactPayload = z.object({});

export const CompactJobResult = z.object({
  /** The scheduler's fire time. */
  firedAt: isoInstant,
  /** done: it compacted what was due (maybe nothing); skipped: another compaction held the warehouse's lock. */
  outcome: z.enum(['done', 'skipped']),
  partitions: z.number().int().nonnegative(),
  /** Small files merged, and their bytes before and after. */
  files: z.number().int().nonnegative(),
  bytesIn: z.number().nonnegative(),
  bytesOut: z.number().nonnegative(),
  /** Covered files removed (no snapshot reads them any more). */
  retired: z.number().int().nonnegative(),
  durationMs: z.number().nonnegative(),
  worker: z.string(),
});
export type CompactJobResult = z.infer<typeof CompactJobResult>;

/**
 * The validated data of a job a worker took. A payload that does not fit will not fit on a retry
 * either: it fails the job at once (UnrecoverableError), with the offending fields named.
 */
export function payloadOf<T>(schema: ZodType<T>, job: Job): T {
  const r = schema.safeParse(job.data);
  if (!r.success) throw new UnrecoverableError(`invalid ${job.name} job data: ${describeZodError(r.error)}`);
  return r.data;
}

/** A result read back from Redis, or null when it is absent or of another shape. */
export function resultOf<T>(schema: ZodType<T>, value: unknown): T | null {
  const r = schema.safeParse(value);
  return r.success ? r.data : null;
}
