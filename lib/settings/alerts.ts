// Settings of alert rules and webhooks (docs/alerts.md): limits per tenant and per rule, and how
// outbound deliveries behave (entries of the settings table, lib/settings/table.ts).
import { z } from 'zod';
import { setting } from './define.ts';
import { positiveInt, secondsToMs, timerSeconds } from './values.ts';

export const ALERTS = {
  ALERT_RULES_PER_TENANT: setting({ schema: positiveInt.default(100), doc: 'alert rules a tenant may have (409 `too_many_alert_rules` beyond)', at: 'alerts.maxRulesPerTenant' }),
  ALERT_FILTERS_PER_RULE: setting({ schema: positiveInt.default(10), doc: "filters one alert rule may carry (the breakdown route's syntax)", at: 'alerts.maxFiltersPerRule' }),
  WEBHOOKS_PER_TENANT: setting({ schema: positiveInt.default(10), doc: 'webhook endpoints a tenant may register (409 `too_many_webhooks` beyond)', at: 'alerts.maxWebhooksPerTenant' }),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: setting({
    schema: z.enum(['0', '1']).default('0'),
    doc: '`1`: webhook targets on loopback, private, link-local or metadata addresses are allowed (off: refused at registration with 400 `webhook_target_forbidden`, and at every delivery on the address the name resolves to)',
    at: 'alerts.allowPrivateTargets',
    as: (value) => value === '1',
  }),
  WEBHOOK_TIMEOUT_SECONDS: setting({ schema: timerSeconds.max(30, 'at most 30').default(10), doc: 'one delivery attempt (connect, send, answer) is abandoned after this', at: 'alerts.deliveryTimeoutMs', as: secondsToMs }),
  WEBHOOK_SECRET_GRACE_SECONDS: setting({
    schema: timerSeconds.default(86_400),
    doc: "after a rotation the old signing secret still signs (beside the new one) for this long",
    at: 'alerts.secretGraceMs',
    as: secondsToMs,
  }),
  WEBHOOK_RETRY_HOURS: setting({
    schema: z.coerce.number().min(24, 'at least 24').max(168, 'at most 168').default(24),
    doc: 'a delivery is retried (exponential backoff with jitter) for this long; an endpoint failing every delivery this long is disabled',
    at: 'alerts.retryForMs',
    as: (h: number) => Math.round(h * 3_600_000),
  }),
  WEBHOOK_DELIVERIES: setting({
    schema: z.enum(['outbox', 'queue']).default('outbox'),
    doc: "who sends the pings and hand-made redeliveries of `serve`: `outbox` (the API process, from files on disk; one API process per warehouse) or `queue` (the worker tier's BullMQ queue, through REDIS_URL). `start` always uses its outbox; workers always the queue",
    at: 'alerts.deliveries',
  }),
  WEBHOOK_CONCURRENCY: setting({
    schema: positiveInt.default(16),
    doc: "deliveries one worker process attempts at once (the worker tier's `webhooks` queue); each endpoint has at most one in flight, so a slow receiver holds one slot",
    at: 'alerts.deliveryConcurrency',
  }),
  WEBHOOK_SWEEP_SECONDS: setting({
    schema: timerSeconds.default(10),
    doc: "how often a worker puts back in the queue the deliveries pending on disk that the queue lacks (Redis lost its data, a crash between a delivery's record and its job) and the incidents' events not yet enqueued",
    at: 'alerts.sweepMs',
    as: secondsToMs,
  }),
};
