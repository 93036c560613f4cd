// A delivery of one event to one endpoint, as the outbox keeps it on disk (one small file each,
// written durably) and GET /control/webhooks/:id/deliveries shows it; and the retry schedule.
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { isoInstant } from '../../lib/json-schema.ts';
import { writeJsonDurable } from '../../lib/fsx.ts';
import { EVENT_TYPES } from '../incident-schema.ts';

const AttemptSchema = z.object({
  at: isoInstant(),
  status: z.int().nullable(),
  durationMs: z.number(),
  error: z.string().nullable(),
  retryAfterSeconds: z.number().nullable(),
});

export const DeliverySchema = z
  .object({
    id: z.string(),
    endpointId: z.string(),
    tenantId: z.string(),
    eventId: z.string().describe('the webhook-id header of every attempt'),
    type: z.enum(EVENT_TYPES),
    body: z.string().describe('the exact body sent at every attempt'),
    createdAt: isoInstant(),
    state: z.enum(['pending', 'delivered', 'failed']),
    attempts: z.array(AttemptSchema),
    nextAttemptAt: isoInstant().nullable(),
    failure: z.string().nullable(),
    via: z.enum(['outbox', 'queue']).optional().describe("who sends it: the API process's outbox (the default) or the worker tier's queue"),
  })
  .meta({ id: 'WebhookDelivery' });
export type Delivery = z.infer<typeof DeliverySchema>;

export const DeliveryListSchema = z.object({ deliveries: z.array(DeliverySchema.omit({ body: true, tenantId: true })) }).meta({ id: 'WebhookDeliveryList' });

/** Base and cap of the exponential backoff between attempts. */
export const FIRST_RETRY_MS = 5_000;
export const MAX_RETRY_GAP_MS = 3_600_000;

/** The wait before attempt n + 1 (n attempts made): 5 s × 2^(n−1), at most an hour, ±20 % jitter; at least what Retry-After asked. */
export function retryDelayMs(attempts: number, retryAfterSeconds: number | null, random = Math.random): number {
  const base = Math.min(MAX_RETRY_GAP_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  return Math.max(jittered, (retryAfterSeconds ?? 0) * 1000);
}

export async function readDelivery(file: string): Promise<Delivery | null> {
  try {
    const parsed = DeliverySchema.safeParse(JSON.parse(await fs.readFile(file, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export const writeDelivery = (dir: string, d: Delivery) => writeJsonDurable(path.join(dir, `${d.id}.json`), d, { mode: 0o600 });
