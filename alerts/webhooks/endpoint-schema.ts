// Webhook endpoints (docs/api.md, "Alerts and webhooks"): the registration body, the stored
// record (signing secrets kept in the control area, mode 0600) and what the API shows of one.
import { z } from 'zod';
import { isoInstant } from '../../lib/json-schema.ts';
import { EVENT_TYPES } from '../incident-schema.ts';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export const WebhookCreateSchema = z
  .object({
    url: z.string({ error: 'an absolute http(s) URL' }).max(MAX_WEBHOOK_URL_LENGTH, `at most ${MAX_WEBHOOK_URL_LENGTH} characters`),
    events: z.array(z.enum(EVENT_TYPES, { error: `one of ${EVENT_TYPES.join(', ')}` })).min(1, 'at least one event type').optional().describe('default: every event type'),
    customerId: z.string().optional().describe('operators only: the tenant to act for'),
  })
  .strict()
  .meta({ id: 'WebhookCreate' });

const SecretSchema = z.object({ secret: z.string().regex(/^whsec_[A-Za-z0-9+/=]{20,}$/), createdAt: isoInstant(), notAfter: isoInstant().nullable() });

export const StoredEndpointSchema = z.object({
  id: z.string().regex(/^whk_[0-9A-Za-z]{10,40}$/),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)),
  /** Newest first; an old one signs too until its notAfter (a rotation's grace period). */
  secrets: z.array(SecretSchema).min(1),
  createdAt: isoInstant(),
  /** Since when every delivery has failed (null after a success). */
  failingSince: isoInstant().nullable(),
  disabled: z.object({ at: isoInstant(), reason: z.string() }).nullable(),
});
export type StoredEndpoint = z.infer<typeof StoredEndpointSchema>;

const endpointInfo = {
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)),
  customerId: z.string(),
  createdAt: isoInstant(),
  failingSince: isoInstant().nullable(),
  disabled: z.object({ at: isoInstant(), reason: z.string() }).nullable().describe('set when the endpoint answered 410 Gone or failed for the whole retry period'),
};

export const WebhookSchema = z.object(endpointInfo).meta({ id: 'Webhook' });
export const WebhookWithSecretSchema = z
  .object({
    ...endpointInfo,
    secret: z.string().describe('the signing secret (whsec_…): shown only here'),
    previousSecretsValidUntil: isoInstant().nullable().optional().describe('after a rotation: until when the previous secrets sign too'),
  })
  .meta({ id: 'WebhookWithSecret' });
export const WebhookListSchema = z.object({ webhooks: z.array(WebhookSchema) }).meta({ id: 'WebhookList' });
