// Alert rules (docs/api.md, "Alerts and webhooks"): what a rule is, its metrics and windows,
// and the zod schemas of the bodies that create and change one and of the stored rule.
import { z } from 'zod';
import { isoInstant } from '../lib/json-schema.ts';
import { parseStreamId } from '../warehouse/ids.ts';
import type { ServedWindow } from '../warehouse/figures/index.ts';

/** The figures a rule watches: those of the breakdown route, and the stream summary's activePeers. */
export const ALERT_METRICS = [
  'avgOffloadRatio',
  'rebufferRatio',
  'startupTimeP95Ms',
  'p2pConnectionSuccess',
  'totalSessions',
  'totalBytesFallback',
  'avgBufferHealth',
  'activePeers',
] as const;
export type AlertMetric = (typeof ALERT_METRICS)[number];

/** 5m and 15m are computed on demand from the recent reports of the streams and customers rules name (docs/alerts.md). */
export const ALERT_WINDOWS = ['5m', '15m', '1h', '24h'] as const satisfies readonly ServedWindow[];
export const ALERT_STATES = ['ok', 'pending', 'firing', 'insufficient_data'] as const;
export type AlertState = (typeof ALERT_STATES)[number];

/** The longest `for` a rule may wait before firing. */
export const MAX_FOR_MS = 86_400_000;
const FOR_UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

/** `for` as milliseconds: a whole number and a unit s, m or h (`0s`, `30s`, `5m`); anything else never elapses. */
export function forMs(text: string): number {
  const m = /^(\d{1,6})([smh])$/.exec(text);
  return m ? Number(m[1]) * FOR_UNITS[m[2]!]! : Number.POSITIVE_INFINITY;
}

const name = z.string().trim().min(1, 'a name of 1 to 200 characters').max(200, 'a name of 1 to 200 characters');
const metric = z.enum(ALERT_METRICS, { error: `one of ${ALERT_METRICS.join(', ')}` });
const streamId = z.string().refine((s) => parseStreamId(s) !== null, 'a stream id <customerId>:<name>');
const filters = z.array(z.string().max(256, 'a filter is at most 256 characters'), { error: 'an array of filters such as "device:mobile" or "!region:eu-west"' });
const windowName = z.enum(ALERT_WINDOWS, { error: `one of ${ALERT_WINDOWS.join(', ')}` });
const condition = z.enum(['above', 'below'], { error: 'above or below' });
const finite = z.number({ error: 'a finite number' }).refine(Number.isFinite, 'a finite number');
const minSessions = z.int({ error: 'a whole number from 0' }).min(0, 'a whole number from 0').max(1_000_000_000, 'at most 1000000000');
const forText = z
  .string()
  .regex(/^\d{1,6}[smh]$/, 'a duration such as 0s, 30s, 5m or 1h')
  .refine((s) => forMs(s) <= MAX_FOR_MS, 'at most 24h');

/** The body of POST /control/alerts (filters are checked further by the breakdown filter parser). */
export const AlertRuleCreateSchema = z
  .object({
    name,
    metric,
    streamId: streamId.optional().describe("one of the caller's streams; without it the rule watches the tenant's streams together"),
    filters: filters.optional().describe("the breakdown route's filters: `dim:value` keeps, `!dim:value` drops"),
    window: windowName,
    condition,
    threshold: finite,
    recoveryThreshold: finite.optional().describe('the value at which a firing rule recovers (default: the threshold); on the threshold\'s recovering side'),
    minSessions: minSessions.optional().describe('below this many sessions in the window the rule is insufficient_data, never firing (default 1)'),
    for: forText.optional().describe('how long the condition must hold before firing (default 0s)'),
    customerId: z.string().optional().describe('operators only: the tenant to act for'),
  })
  .strict()
  .meta({ id: 'AlertRuleCreate' });

/** The body of PATCH /control/alerts/:id: any of the fields; null clears an optional one. */
export const AlertRulePatchSchema = z
  .object({
    name: name.optional(),
    metric: metric.optional(),
    streamId: streamId.nullable().optional(),
    filters: filters.nullable().optional(),
    window: windowName.optional(),
    condition: condition.optional(),
    threshold: finite.optional(),
    recoveryThreshold: finite.nullable().optional(),
    minSessions: minSessions.optional(),
    for: forText.optional(),
  })
  .strict()
  .meta({ id: 'AlertRulePatch' });

/** A rule as stored (control/alerts/<tenantId>.json) and served, `state` added from its evaluation. */
export const StoredRuleSchema = z.object({
  id: z.string().regex(/^alr_[0-9A-Za-z]{10,40}$/),
  name: z.string(),
  metric,
  streamId: z.string().optional(),
  filters: z.array(z.string()).optional(),
  window: windowName,
  condition,
  threshold: z.number(),
  recoveryThreshold: z.number().optional(),
  minSessions: z.int().min(0),
  for: z.string(),
  createdAt: isoInstant(),
  updatedAt: isoInstant(),
});
export type AlertRule = z.infer<typeof StoredRuleSchema>;

export const AlertRuleSchema = StoredRuleSchema.extend({
  state: z.enum(ALERT_STATES).describe('read-only: the state at the last evaluated snapshot (ok before any)'),
  customerId: z.string(),
}).meta({ id: 'AlertRule' });

export const AlertRuleListSchema = z.object({ alerts: z.array(AlertRuleSchema) }).meta({ id: 'AlertRuleList' });

/** A rule's input fields once validated (create, or an existing rule with a patch applied). */
export type RuleFields = Omit<AlertRule, 'id' | 'createdAt' | 'updatedAt'>;
