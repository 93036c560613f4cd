// The fire time a scheduler's tick stands for (the asOf of the run it starts), read from the tick
// as BullMQ made it: shared by the tick's processing (ticks.ts) and the list of runs (runs.ts).
import type { Job } from 'bullmq';
import { z } from 'zod';
import { resultOf } from './payloads.ts';

/** The schedule a tick was made by, as BullMQ copies it into the tick's options. */
export const TickRepeat = z.object({ every: z.number().positive().optional(), pattern: z.string().optional(), tz: z.string().optional() });
export type TickRepeat = z.infer<typeof TickRepeat>;

/**
 * The fire time of a job made by a job scheduler, which is the asOf of the run it starts: the
 * same whichever worker takes it and however late, so a re-delivered tick names the same run.
 * A cron scheduler's ticks carry it in prevMillis; an interval's (`every`) only in their id,
 * `repeat:<scheduler>:<fire time>`.
 */
export function scheduledAsOf(job: Job): Date {
  const at = job.opts.prevMillis ?? Number(/^repeat:[^:]+:(\d+)$/.exec(job.id ?? '')?.[1]);
  const ms = typeof at === 'number' && Number.isFinite(at) ? at : job.timestamp;
  // An interval's fire times are its multiples; a tick added late (a busy worker) still names the
  // fire time it stands for.
  const every = resultOf(TickRepeat, (job.opts as { repeat?: unknown }).repeat)?.every;
  return new Date(every ? Math.floor(ms / every) * every : ms);
}

