// Incidents and the evaluation state of rules (docs/alerts.md): what the evaluator keeps per tenant
// and what GET /control/alerts/:id/incidents and /control/incidents serve.
import { z } from 'zod';
import { isoInstant } from '../lib/json-schema.ts';
import { ALERT_STATES, StoredRuleSchema } from './rule-schema.ts';

export const EVENT_TYPES = ['incident.opened', 'incident.resolved', 'ping'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** An event of an incident: its id is the webhook-id of every delivery of it, on every retry. */
export const IncidentEventSchema = z.object({
  id: z.string(),
  type: z.enum(EVENT_TYPES),
  timestamp: isoInstant(),
  /** Whether its deliveries are in the outbox (or queue) of every endpoint that takes it. */
  enqueued: z.boolean(),
});
export type IncidentEvent = z.infer<typeof IncidentEventSchema>;

export const IncidentSchema = z
  .object({
    id: z.string(),
    ruleId: z.string(),
    customerId: z.string(),
    state: z.enum(['open', 'resolved']),
    openedAt: isoInstant().describe("the asOf of the snapshot that opened it"),
    resolvedAt: isoInstant().nullable(),
    valueAtOpen: z.number(),
    worstValue: z.number(),
    valueAtClose: z.number().nullable(),
    openedSnapshot: z.string(),
    resolvedSnapshot: z.string().nullable(),
    rule: StoredRuleSchema.describe('the rule as it was when the incident opened'),
  })
  .meta({ id: 'Incident' });
export type Incident = z.infer<typeof IncidentSchema>;

export const IncidentListSchema = z.object({ incidents: z.array(IncidentSchema) }).meta({ id: 'IncidentList' });

/** What the evaluator remembers of a rule between snapshots. */
export const RuleRunSchema = z.object({
  state: z.enum(ALERT_STATES),
  /** When the state began (a snapshot's asOf). */
  since: isoInstant(),
  /** While pending: the asOf since which the condition holds. */
  pendingSince: isoInstant().nullable(),
  snapshot: z.string(),
  asOf: isoInstant(),
  value: z.number().nullable(),
  sessions: z.number(),
  openIncident: z.string().nullable(),
});
export type RuleRun = z.infer<typeof RuleRunSchema>;

export const StateDocSchema = z.object({
  runs: z.record(z.string().regex(/^alr_/), RuleRunSchema),
  incidents: z.array(IncidentSchema.extend({ events: z.array(IncidentEventSchema) })),
});
export type StateDoc = z.infer<typeof StateDocSchema>;
export type StoredIncident = StateDoc['incidents'][number];
