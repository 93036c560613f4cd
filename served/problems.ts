// The API's problems (RFC 9457, docs/api.md "Errors"), by stable code, on the typed error the
// request frame answers (lib/http/problem.ts), and what the API makes of DuckDB running out of
// memory.
import type { Context } from 'koa';
import type { Logger } from '../lib/log.ts';
import { ApiError, frameProblems } from '../lib/http/problem.ts';
import { isOutOfMemory } from '../warehouse/duckdb/index.ts';

const BEARER = 'Bearer realm="p2ptel"';

/** Problems of a list listed in one body at most: a body never grows with what the client sent. */
const MAX_LISTED_ERRORS = 100;

/**
 * A submitted value as a problem body may echo it: numbers, booleans and null as they are, strings
 * cut at 200 characters, anything nested only named (an array of n, an object). A body never
 * carries an unbounded value (a 30,000-level array would overflow JSON.stringify).
 */
export function echoValue(value: unknown): unknown {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'string') return value.length > 200 ? `${value.slice(0, 200)}…` : value;
  if (Array.isArray(value)) return `(an array of ${value.length})`;
  return `(${typeof value})`;
}

/** The catalogue of problems the API answers with, by stable code. */
export const problems = {
  ...frameProblems,
  missingToken: () =>
    new ApiError(401, 'missing_token', 'Authentication required', 'Send a token as "Authorization: Bearer <token>".', {}, { 'WWW-Authenticate': BEARER }),
  invalidToken: (detail: string) =>
    new ApiError(401, 'invalid_token', 'Invalid token', detail, {}, {
      'WWW-Authenticate': `${BEARER}, error="invalid_token", error_description="${detail.replace(/"/g, "'")}"`,
    }),
  forbiddenStream: () =>
    new ApiError(403, 'forbidden_stream', 'Stream not accessible', 'This stream is not attributed to your account.'),
  streamIdRequired: (what: string) =>
    new ApiError(403, 'stream_id_required', 'Stream id required', `A tenant token must name one of its streams with streamId; ${what} across the platform is not available to tenants.`),
  operatorOnly: () =>
    new ApiError(403, 'operator_only', 'Operators only', 'This route is reserved for the platform operators.'),
  missingCapability: (cap: string) =>
    new ApiError(403, 'missing_capability', 'Missing capability', `This route needs the ${cap} capability.`),
  invalidQuery: (code: string, detail: string, extra: Record<string, unknown> = {}) =>
    new ApiError(400, code, 'Invalid request', detail, extra),
  streamNotFound: () => new ApiError(404, 'stream_not_found', 'Stream not found', 'This stream has never reported.'),
  reportNotPublished: () =>
    new ApiError(404, 'report_not_published', 'Report not published', 'No nightly run has published a pilot report of this stream yet; ask without source=published for one made now.'),
  forbiddenTenant: () =>
    new ApiError(403, 'forbidden_tenant', 'Tenant not accessible', 'A tenant token may only manage its own tenant.'),
  tenantNotFound: () => new ApiError(404, 'tenant_not_found', 'Tenant not found', 'There is no tenant with this id or customerId.'),
  customerNotFound: () => new ApiError(404, 'customer_not_found', 'Customer not found', 'No tenant and no data for this customer.'),
  invoiceNotFound: () => new ApiError(404, 'invoice_not_found', 'Invoice not found', 'No invoice has this id (one per customer and closed month with usage).'),
  tenantOnly: () => new ApiError(403, 'tenant_only', 'Tenants only', 'Only a tenant token can sign manifests of its own origins.'),
  invalidOrigins: (errors: { index: number | null; value: unknown; reason: string }[]) =>
    new ApiError(400, 'invalid_origins', 'Invalid origins', `${errors.length} problem${errors.length === 1 ? '' : 's'} in the list; nothing was stored.`, {
      errors: errors.slice(0, MAX_LISTED_ERRORS).map((e) => ({ ...e, value: echoValue(e.value) })),
    }),
  invalidUrl: (detail: string) => new ApiError(400, 'invalid_url', 'Invalid URL', detail),
  originNotAllowed: () =>
    new ApiError(403, 'origin_not_allowed', 'Origin not allowed', "The URL is outside the tenant's allowlist of content origins."),
  preconditionFailed: (etag: string) =>
    new ApiError(412, 'precondition_failed', 'Precondition failed', 'The list changed since you read it: read it again, then replace it.', { currentETag: etag }, { ETag: etag }),
  snapshotUnavailable: () =>
    new ApiError(503, 'snapshot_unavailable', 'No data yet', 'No rollup snapshot has been published yet.', {}, { 'Retry-After': '10' }),
  snapshotUnreadable: () =>
    new ApiError(503, 'snapshot_unreadable', 'Snapshot unreadable', 'The published snapshot cannot be read; the operators have been told (API log).', {}, { 'Retry-After': '30' }),
  timeout: () => new ApiError(503, 'timeout', 'Request timed out', 'The request took too long; try again.', {}, { 'Retry-After': '5' }),
  duplicateAuthorization: () =>
    new ApiError(400, 'duplicate_authorization', 'Several Authorization headers', 'Send exactly one Authorization header.'),
  bodyTooDeep: (max: number) =>
    new ApiError(400, 'json_too_deep', 'JSON nested too deeply', `The body nests arrays and objects more than ${max} levels deep.`),
  tooManyExports: (scope: 'tenant' | 'server', limit: number, retryAfterSeconds: number) =>
    new ApiError(
      429,
      'too_many_exports',
      'Too many exports',
      scope === 'tenant'
        ? `Your account already runs ${limit} export${limit === 1 ? '' : 's'} at once, the most allowed; retry when one has finished.`
        : `The server already runs ${limit} exports at once, the most it allows; retry shortly.`,
      { limit },
      { 'Retry-After': String(retryAfterSeconds) },
    ),
  tooManyRequests: (what: string, limit: number, retryAfterSeconds: number) =>
    new ApiError(429, 'too_many_requests', 'Too many requests', `Your account already has ${limit} ${what} in progress, the most allowed; retry when one has finished.`, { limit }, {
      'Retry-After': String(retryAfterSeconds),
    }),
  requestTooLarge: () =>
    new ApiError(400, 'request_too_large', 'Request too large', 'The request line and headers are over 16 KiB; no query parameter takes a value that long.'),
  breakdownsUnavailable: () =>
    new ApiError(503, 'breakdowns_unavailable', 'Breakdowns not ready', 'The served snapshot was published before breakdowns existed; the next rollup adds them.', {}, { 'Retry-After': '60' }),
  busy: (retryAfterSeconds: number) =>
    new ApiError(503, 'busy', 'Server busy', 'Too much work is queued on the server; retry shortly.', {}, { 'Retry-After': String(retryAfterSeconds) }),
  invalidAlertRule: (errors: { field: string; reason: string }[]) =>
    new ApiError(400, 'invalid_alert_rule', 'Invalid alert rule', `${errors.length} problem${errors.length === 1 ? '' : 's'} in the rule; nothing was stored.`, {
      errors: errors.slice(0, MAX_LISTED_ERRORS),
    }),
  alertRuleNotFound: () => new ApiError(404, 'alert_rule_not_found', 'Alert rule not found', 'Your tenant has no alert rule with this id.'),
  tooManyAlertRules: (limit: number) => new ApiError(409, 'too_many_alert_rules', 'Too many alert rules', `A tenant may have at most ${limit} alert rules; delete one first.`, { limit }),
  customerIdRequired: () =>
    new ApiError(400, 'customer_id_required', 'customerId required', 'An operator token acts for a tenant: name it with customerId (query, or the body of a POST).'),
  invalidWebhook: (errors: { field: string; reason: string }[]) =>
    new ApiError(400, 'invalid_webhook', 'Invalid webhook endpoint', `${errors.length} problem${errors.length === 1 ? '' : 's'} in the endpoint; nothing was stored.`, {
      errors: errors.slice(0, MAX_LISTED_ERRORS),
    }),
  webhookTargetForbidden: (detail: string) => new ApiError(400, 'webhook_target_forbidden', 'Webhook target forbidden', detail),
  webhookNotFound: () => new ApiError(404, 'webhook_not_found', 'Webhook endpoint not found', 'Your tenant has no webhook endpoint with this id.'),
  deliveryNotFound: () => new ApiError(404, 'delivery_not_found', 'Delivery not found', 'This endpoint has no delivery with this id.'),
  tooManyWebhooks: (limit: number) => new ApiError(409, 'too_many_webhooks', 'Too many webhook endpoints', `A tenant may register at most ${limit} endpoints; delete one first.`, { limit }),
  invalidState: () => new ApiError(400, 'invalid_state', 'Invalid request', 'state must be open or resolved.', { parameter: 'state', allowed: ['open', 'resolved'] }),
  tokenRevoked: () =>
    new ApiError(401, 'invalid_token', 'Invalid token', 'The token has been revoked.', {}, {
      'WWW-Authenticate': `${BEARER}, error="invalid_token", error_description="The token has been revoked."`,
    }),
};

/** Retry-After of a request refused because DuckDB's memory was full. */
export const OUT_OF_MEMORY_RETRY_AFTER_SECONDS = 5;

/**
 * DuckDB could not fit a request's work in API_DUCKDB_MEMORY_LIMIT beside the others running: the
 * server is full, not broken, and the client retries (docs/api.md: 503 `busy`), logged as a
 * warning. Any other error is handed back as it is.
 */
export function outOfMemoryAsBusy(err: unknown, ctx: Context, log: Logger): unknown {
  if (err instanceof ApiError || !isOutOfMemory(err)) return err;
  log.warn({ err: (err as Error).message.split('\n')[0], reqId: ctx.state['reqId'] }, 'DuckDB out of memory: answered busy');
  return problems.busy(OUT_OF_MEMORY_RETRY_AFTER_SECONDS);
}
