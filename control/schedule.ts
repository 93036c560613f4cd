// The schedule's desired state, kept with the warehouse (control/schedule.json) rather than only
// in Redis: written by `schedule`, read by workers that find the job schedulers missing (a Redis
// that lost its data) to install them again (jobs/queue/schedule-keeper.ts). One entry per queue
// prefix: deployments that share a warehouse and not a prefix keep their own.
import path from 'node:path';
import { z } from 'zod';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { cron, queuePrefix } from '../lib/settings/values.ts';
import { readDocument, updateDocument } from './documents.ts';

const DesiredScheduleSchema = z.object({
  prefix: queuePrefix,
  /** The rollup cron (UTC), used when `rollupEveryMs` is null. */
  rollup: cron,
  rollupEveryMs: z.number().int().min(1000).nullable(),
  reports: cron,
  compactEveryMs: z.number().int().min(1000),
  writtenAt: z.string(),
});
export type DesiredSchedule = z.infer<typeof DesiredScheduleSchema>;

const ScheduleDocSchema = z
  .object({ version: z.literal(1), schedules: z.array(DesiredScheduleSchema) })
  .refine((d) => new Set(d.schedules.map((s) => s.prefix)).size === d.schedules.length, 'two entries share a queue prefix');
type ScheduleDoc = z.infer<typeof ScheduleDocSchema>;
const EMPTY: ScheduleDoc = { version: 1, schedules: [] };

export function scheduleFile(layout: WarehouseLayout): string {
  return path.join(layout.control, 'schedule.json');
}

/** Record what `schedule` installs for `prefix` (replacing what it installed before). */
export async function writeDesiredSchedule(layout: WarehouseLayout, desired: Omit<DesiredSchedule, 'writtenAt'>): Promise<DesiredSchedule> {
  const entry: DesiredSchedule = { ...desired, writtenAt: new Date().toISOString() };
  return updateDocument(scheduleFile(layout), ScheduleDocSchema, EMPTY, (doc) => ({
    next: { ...doc, schedules: [...doc.schedules.filter((s) => s.prefix !== desired.prefix), entry] },
    result: entry,
  }));
}

/** What `schedule` last installed for `prefix`; null when it never ran against this warehouse. */
export async function readDesiredSchedule(layout: WarehouseLayout, prefix: string): Promise<DesiredSchedule | null> {
  const doc = await readDocument(scheduleFile(layout), ScheduleDocSchema, EMPTY);
  return doc.schedules.find((s) => s.prefix === prefix) ?? null;
}
