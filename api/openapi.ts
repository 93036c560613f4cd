// The OpenAPI 3.1 document of the API, served at GET /openapi.json, generated: every schema (query
// parameters, bodies, responses, the pilot report) comes from the zod schemas the routes parse
// with (api/schemas/, pilot/pilot-report-schema.ts); this file only says which route answers what.
// test/api/openapi.test.ts validates real responses of every route against it, and checks that
// it documents exactly the routes the router has.
import { operationId } from '../lib/operation-ids.ts';
import { z } from 'zod';
import { registryToJsonSchemas, toJsonSchema } from '../lib/json-schema.ts';
import { EXPORT_FORMATS, EXPORT_MEDIA } from './export/export.ts';
import { MAX_BUCKETS } from './timeseries.ts';
import { PilotReportSchema } from '../pilot/pilot-report-schema.ts';
import { BreakdownQuery, BreakdownSchema, FilterParam, ExportQuery, PlatformMetricsQuery, PlatformMetricsSchema, StreamListSchema, StreamMetricsQuery, StreamMetricsSchema, StreamsQuery, SummaryQuery, SummarySchema, TimeseriesQuery, TimeseriesSchema } from './schemas/telemetry.ts';
import { PilotReportQuery } from './schemas/reports.ts';
import { BillingSummarySchema, BillingUsageSchema, CustomerBillingSchema, InvoiceListSchema, InvoiceSchema, InvoicesQuery, PeriodQuery } from './schemas/billing.ts';
import { JwksSchema, OriginsPutSchema, OriginsSchema, PublicKeySchema, SignRequestSchema, SignResponseSchema, TenantDetailSchema, TenantListSchema } from './schemas/control.ts';
import { HealthSchema, InvalidOriginsProblemSchema, ProblemSchema, ReadySchema } from './schemas/service.ts';
import { AlertRuleCreateSchema, AlertRuleListSchema, AlertRulePatchSchema, AlertRuleSchema } from '../alerts/rule-schema.ts';
import { IncidentListSchema } from '../alerts/incident-schema.ts';
import { WebhookCreateSchema, WebhookListSchema, WebhookWithSecretSchema } from '../alerts/webhooks/endpoint-schema.ts';
import { DeliveryListSchema } from '../alerts/webhooks/delivery-record.ts';
import { AcceptedDeliverySchema } from './schemas/alerts.ts';

type Json = Record<string, unknown>;

/** The name under which a schema with an id is a component. */
function ref(schema: z.ZodType): Json {
  const id = (z.globalRegistry.get(schema) as { id?: string } | undefined)?.id;
  if (!id) throw new Error('a schema in the OpenAPI document needs an id (.meta({ id }))');
  return { $ref: `#/components/schemas/${id}` };
}

const problem = (description: string, schema: z.ZodType = ProblemSchema): Json => ({ description, content: { 'application/problem+json': { schema: ref(schema) } } });
const snapshotHeaders = {
  ETag: { $ref: '#/components/headers/ETag' },
  'Last-Modified': { $ref: '#/components/headers/LastModified' },
  'X-Request-Id': { $ref: '#/components/headers/RequestId' },
};
const json = (schema: z.ZodType, description = 'OK', headers: Json = snapshotHeaders): Json => ({ description, headers, content: { 'application/json': { schema: ref(schema) } } });
const NOT_MODIFIED = { $ref: '#/components/responses/NotModified' };
/** A refusal that says when to come back (429 and 503 of the limits in docs/operations.md). */
const problemRetry = (description: string): Json => ({
  ...problem(description),
  headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'string', pattern: '^[0-9]+$' } } },
});
const UNAUTHORIZED = problem('Missing, malformed, badly signed, expired or revoked token, or a token of a removed tenant (with WWW-Authenticate)');
const UNAVAILABLE = problemRetry('No snapshot published yet (snapshot_unavailable), a published one that cannot be read (snapshot_unreadable), or the request timed out (timeout), with Retry-After');

/** Query parameters of a route from its zod schema: what a client sends (`io: input`). */
function queryParameters(schema: z.ZodObject): Json[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const { $schema: _s, description, ...s } = toJsonSchema(field as z.ZodType, { io: 'input' });
    const required = !(field as z.ZodType).safeParse(undefined).success;
    return { name, in: 'query', ...(required ? { required } : {}), ...(description ? { description } : {}), schema: s };
  });
}

/** The repeatable `filter` parameter (`filter=a&filter=b`), from its zod schema. */
function filterParameter(): Json {
  const { $schema: _s, description, ...schema } = toJsonSchema(FilterParam, { io: 'input' });
  return { name: 'filter', in: 'query', style: 'form', explode: true, description, schema };
}
const FILTER_PARAM = filterParameter();
const BAD_FILTER = 'invalid_filter: an unknown dimension, no colon, more than 50 filters or one over 256 characters; the body lists the dimensions';

const pathParam = (name: string, description: string): Json => ({ name, in: 'path', required: true, description, schema: { type: 'string' } });
const STREAM_ID_PATH = pathParam('streamId', '`<customerId>:<name>`; the colon raw or percent-encoded (%3A)');

interface Operation {
  tags: string[];
  summary: string;
  /** No token needed. */
  public?: true;
  query?: z.ZodObject;
  parameters?: Json[];
  body?: z.ZodType;
  responses: Json;
}

/** An operator route (rule 6 of docs/api.md): 403 for every tenant token, whatever customer it names. */
function operatorGet(summary: string, capability: string, schema: z.ZodType, extra: Json = {}, more: Pick<Operation, 'query' | 'parameters'> = {}): Operation {
  return {
    tags: ['operators'],
    summary: `${summary} (operators, ${capability}; 403 for every tenant token, whatever customer it names)`,
    ...more,
    responses: {
      '200': json(schema),
      '304': NOT_MODIFIED,
      '401': UNAUTHORIZED,
      '403': problem('A tenant token (operator_only), or a missing capability'),
      '503': UNAVAILABLE,
      ...extra,
    },
  };
}

const OPERATIONS: Record<string, Record<string, Operation>> = {
  '/healthz': { get: { tags: ['service'], summary: 'Liveness', public: true, responses: { '200': json(HealthSchema, 'Alive', {}) } } },
  '/readyz': {
    get: {
      tags: ['service'],
      summary: 'Readiness: a snapshot is loaded',
      public: true,
      responses: { '200': json(ReadySchema, 'Ready', {}), '503': problem('No snapshot loaded yet (snapshot_unavailable)') },
    },
  },
  '/openapi.json': {
    get: {
      tags: ['service'],
      summary: 'This document',
      public: true,
      responses: { '200': { description: 'The OpenAPI document', content: { 'application/json': { schema: { type: 'object' } } } } },
    },
  },
  '/telemetry/streams': {
    get: {
      tags: ['telemetry'],
      summary:
        "The caller's streams with at least one report in the window, sorted by id; with filters, those with a session the filters keep, each with those sessions' figures (activePeers, live and lastSeenAt stay the stream's; computed on demand like a breakdown)",
      parameters: [FILTER_PARAM],
      query: StreamsQuery,
      responses: {
        '200': json(StreamListSchema),
        '304': NOT_MODIFIED,
        '400': problem(`Bad window, detail or filter (invalid_window, invalid_detail, ${BAD_FILTER})`),
        '401': UNAUTHORIZED,
        '403': problem('Missing capability'),
        '429': problemRetry('With filters: the caller already has as many breakdowns in progress as allowed (too_many_requests)'),
        '503': problemRetry(
          'No snapshot yet (snapshot_unavailable, snapshot_unreadable); with filters: not computed within the query timeout (timeout), too much on-demand work (busy), or a snapshot from before breakdowns (breakdowns_unavailable)',
        ),
      },
    },
  },
  '/telemetry/metrics': {
    get: {
      ...operatorGet('Platform-wide metrics for a window, and per customer with groupBy=customer', 'telemetry:read', PlatformMetricsSchema, {
        '400': problem('Bad window or groupBy (invalid_window, invalid_group_by)'),
      }),
      tags: ['telemetry', 'operators'],
      query: PlatformMetricsQuery,
    },
  },
  '/telemetry/metrics/{streamId}': {
    get: {
      tags: ['telemetry'],
      summary:
        "Metrics of one stream over a window (zeros when it has reports, but none in the window), with the quality figures; with filters, those of the sessions the filters keep (computed on demand); with period=previous, those of the period of the window's length that ends where the window starts, and the sessions active at its end (computed on demand from the raw files). window=5m and 15m are computed on demand from the stream's last 15 minutes of reports (docs/api.md, Short windows)",
      parameters: [STREAM_ID_PATH, FILTER_PARAM],
      query: StreamMetricsQuery,
      responses: {
        '200': json(StreamMetricsSchema),
        '304': NOT_MODIFIED,
        '400': problem(`Bad window (invalid_window), period (invalid_period) or filter (${BAD_FILTER}); period=previous with window=all (no_previous_period)`),
        '401': UNAUTHORIZED,
        '403': problem('The stream is not attributed to the caller (forbidden_stream)'),
        '404': problem('A stream of the caller that has never reported (stream_not_found)'),
        '429': problemRetry('With filters or period=previous: the caller already has as many breakdowns (or previous periods) in progress as allowed (too_many_requests)'),
        '503': problemRetry(
          'No snapshot yet (snapshot_unavailable, snapshot_unreadable); with filters or period=previous: not computed within the query timeout (timeout), too much on-demand work (busy), or a snapshot from before breakdowns (breakdowns_unavailable)',
        ),
      },
    },
  },
  '/telemetry/breakdown': {
    get: {
      tags: ['telemetry'],
      summary:
        "Sessions grouped by a session dimension (each session's value at its earliest report in the window), with filters: of one of the caller's streams, of all of them (a tenant), or of the platform (an operator). window=5m and 15m are computed on demand from the last 15 minutes of reports (docs/api.md, Short windows)",
      parameters: [FILTER_PARAM],
      query: BreakdownQuery,
      responses: {
        '200': json(BreakdownSchema),
        '304': NOT_MODIFIED,
        '400': problem(`Bad by (invalid_by, with the allowed list), window (invalid_window) or filter (${BAD_FILTER})`),
        '401': UNAUTHORIZED,
        '403': problem('A streamId not attributed to the caller (forbidden_stream), or a missing capability'),
        '404': problem('A stream of the caller that has never reported (stream_not_found)'),
        '429': problemRetry('The caller already has as many breakdowns (or previous periods) in progress as allowed (too_many_requests)'),
        '503': problemRetry(
          'No snapshot yet (snapshot_unavailable, snapshot_unreadable); not computed within the query timeout (timeout); too much on-demand work (busy); a snapshot from before breakdowns (breakdowns_unavailable)',
        ),
      },
    },
  },
  '/telemetry/summary': {
    get: {
      tags: ['telemetry'],
      summary:
        "Headline figures of every stream of a customer together (a tenant: its own; an operator: the customer named, or the platform), with filters: distinct sessions and percentiles over all of them, not added up per stream; with period=previous, those of the period of the window's length that ends where the window starts (computed on demand from the raw files)",
      parameters: [FILTER_PARAM],
      query: SummaryQuery,
      responses: {
        '200': json(SummarySchema),
        '304': NOT_MODIFIED,
        '400': problem(`Bad window (invalid_window), customerId (invalid_customer_id), period (invalid_period) or filter (${BAD_FILTER}); period=previous with window=all (no_previous_period)`),
        '401': UNAUTHORIZED,
        '403': problem('A tenant naming another customer (forbidden_tenant), or a missing capability'),
        '404': problem('An operator naming a customer without data in the snapshot (customer_not_found)'),
        '429': problemRetry('The caller already has as many breakdowns (or previous periods) in progress as allowed (too_many_requests)'),
        '503': problemRetry(
          'No snapshot yet (snapshot_unavailable, snapshot_unreadable); not computed within the query timeout (timeout); too much on-demand work (busy); a snapshot from before breakdowns (breakdowns_unavailable)',
        ),
      },
    },
  },
  '/telemetry/timeseries': {
    get: {
      tags: ['telemetry'],
      summary:
        "Bucketed series of one stream: whole aligned buckets, empty ones with zeros; with quality=true, each bucket's quality figures too; with filters, only the reports of the sessions the filters keep (each session's value at its earliest report from the first bucket on; computed on demand)",
      parameters: [FILTER_PARAM],
      query: TimeseriesQuery,
      responses: {
        '200': json(TimeseriesSchema),
        '304': NOT_MODIFIED,
        '400': problem(`Bad bucketSeconds, window or filter (${BAD_FILTER}), or more than ${MAX_BUCKETS} buckets (too_many_buckets)`),
        '401': UNAUTHORIZED,
        '403': problem('No streamId (stream_id_required), or a stream not attributed to the caller (forbidden_stream)'),
        '404': problem('A stream of the caller that has never reported'),
        '429': problemRetry('The caller already has as many on-demand series (non-standard bucketSeconds, quality=true or filters) in progress as allowed (too_many_requests)'),
        '503': problemRetry(
          "No snapshot yet (snapshot_unavailable, snapshot_unreadable); an on-demand series not computed within the query timeout counted from the request's arrival (timeout); too much on-demand work queued on the server (busy)",
        ),
      },
    },
  },
  '/telemetry/export': {
    get: {
      tags: ['telemetry'],
      summary: 'Download the deduplicated session reports of one stream in a window (streamed)',
      query: ExportQuery,
      responses: {
        '200': {
          description:
            'The records, with the columns of the session report contract (maps as JSON text in CSV), as an attachment: Content-Disposition: attachment; filename="<customer>_<stream>_<window>.<ext>"',
          headers: { 'Content-Disposition': { schema: { type: 'string' } }, ETag: snapshotHeaders.ETag, 'Last-Modified': snapshotHeaders['Last-Modified'] },
          content: Object.fromEntries(
            EXPORT_FORMATS.map((f) => [EXPORT_MEDIA[f].type.split(';')[0], { schema: f === 'csv' || f === 'ndjson' ? { type: 'string' } : { type: 'string', format: 'binary' } }]),
          ),
        },
        '304': NOT_MODIFIED,
        '400': problem('Bad window or format (invalid_window, invalid_format); checked before any work starts'),
        '401': UNAUTHORIZED,
        '403': problem('No streamId (stream_id_required), or a stream not attributed to the caller'),
        '404': problem('A stream of the caller that has never reported'),
        '429': problemRetry('The caller (or the server) already runs as many exports as allowed (too_many_exports)'),
        '503': problemRetry('No snapshot yet (snapshot_unavailable, snapshot_unreadable), or the first day of the export took longer than its query timeout (timeout)'),
      },
    },
  },
  '/control/reports/pilot/{streamId}': {
    get: {
      tags: ['reports'],
      summary:
        "The pilot report of one of the caller's streams at the snapshot: JSON, a Markdown download or a self-contained HTML page (the nightly run's pre-rendered file when it matches, rendered on demand otherwise: the same bytes); or, with format=jws, its signed statement: a compact JWS (ES256, `kid` in its header, keys at /.well-known/jwks.json) whose payload holds the SHA-256 of the JSON, Markdown and HTML bytes this route serves for the same snapshot and bucketSeconds",
      parameters: [STREAM_ID_PATH],
      query: PilotReportQuery,
      responses: {
        '200': {
          description:
            'The report. md: `Content-Disposition: attachment; filename="pilot-report-<customer>-<name>.md"`, operator-judgement lines blank. html: one page with inline CSS and SVG charts, served with a Content-Security-Policy that lets it load nothing. jws: the statement `{ statement, customerId, streamId, snapshotId, asOf, bucketSeconds, reportVersion, verdict, madeAt, sha256: { json, md, html } }` as a compact JWS, an attachment `pilot-report-<customer>-<name>.jws`.',
          headers: {
            ETag: snapshotHeaders.ETag,
            'Last-Modified': snapshotHeaders['Last-Modified'],
            'X-Report-Source': {
              description: "`prerendered` (the nightly run's file), `rendered` (on demand), or `published` (source=published: the latest nightly file)",
              schema: { type: 'string', enum: ['prerendered', 'rendered', 'published'] },
            },
            'X-Report-Snapshot': { description: 'source=published only: the snapshot the report was rendered at', schema: { type: 'string' } },
            'X-Report-As-Of': { description: "source=published only: that snapshot's asOf", schema: { type: 'string' } },
            'Content-Disposition': { description: 'md and jws only', schema: { type: 'string' } },
          },
          content: {
            'application/json': { schema: ref(PilotReportSchema) },
            'text/markdown': { schema: { type: 'string' } },
            'text/html': { schema: { type: 'string' } },
            'application/jose': { schema: { type: 'string', pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$' } },
          },
        },
        '304': NOT_MODIFIED,
        '400': problem('Bad format, bucketSeconds or source (invalid_format, invalid_bucket_seconds, invalid_source); with source=published, a bucketSeconds other than the default (invalid_bucket_seconds)'),
        '401': UNAUTHORIZED,
        '403': problem('The stream is not attributed to the caller (forbidden_stream), or the token lacks telemetry:read'),
        '404': problem('A stream of the caller that has never reported (stream_not_found); with source=published, no nightly run published its report (report_not_published)'),
        '503': UNAVAILABLE,
      },
    },
  },
  '/control/tenants/{id}/origins': {
    get: {
      tags: ['origins'],
      summary: "A tenant's allowlist of content origins (a tenant token: its own only; an operator: any)",
      parameters: [pathParam('id', 'tenant id (t_…) or customerId')],
      responses: {
        '200': json(OriginsSchema, 'The stored list, normalised', { ETag: { description: 'Version of the list, for If-Match', schema: { type: 'string' } } }),
        '304': NOT_MODIFIED,
        '401': UNAUTHORIZED,
        '403': problem("Another tenant's id, whether or not it exists (forbidden_tenant)"),
        '404': problem('No tenant with this id (tenant_not_found)'),
      },
    },
    put: {
      tags: ['origins'],
      summary: 'Replace the whole list atomically; the empty array clears it (the platform default list then applies)',
      parameters: [
        pathParam('id', 'tenant id (t_…) or customerId'),
        { name: 'If-Match', in: 'header', required: false, description: 'the ETag of the list read before (optional)', schema: { type: 'string' } },
      ],
      body: OriginsPutSchema,
      responses: {
        '200': json(OriginsSchema, 'The stored list', { ETag: { description: 'Version of the new list', schema: { type: 'string' } } }),
        '400': problem(
          'Invalid JSON (invalid_json), JSON nested more than 32 levels (json_too_deep), or invalid entries (invalid_origins, each listed with index, value and reason, at most 100, nested values only named); nothing stored',
          InvalidOriginsProblemSchema,
        ),
        '401': UNAUTHORIZED,
        '403': problem("Another tenant's id (forbidden_tenant)"),
        '404': problem('No tenant with this id (tenant_not_found)'),
        '412': problem('If-Match names another version of the list (precondition_failed)'),
        '413': problem('A body over 64 KiB (payload_too_large)'),
        '415': problem('A body that is not application/json (unsupported_media_type)'),
      },
    },
  },
  '/manifest/public-key': {
    get: {
      tags: ['manifest'],
      summary: 'The public key that verifies manifest signatures (JWK)',
      public: true,
      responses: {
        '200': json(PublicKeySchema, 'Exactly { kty, crv, x, y, use, alg }', { 'Cache-Control': { schema: { type: 'string' } }, ETag: { schema: { type: 'string' } } }),
        '304': NOT_MODIFIED,
      },
    },
  },
  '/.well-known/jwks.json': {
    get: {
      tags: ['reports'],
      summary:
        'The public keys that verify signed pilot-report statements (JWK Set): the current one and those retired less than REPORT_KEY_RETENTION_DAYS ago, newest first',
      public: true,
      responses: {
        '200': json(JwksSchema, 'A JWK Set; no private member', { 'Cache-Control': { schema: { type: 'string' } }, ETag: { schema: { type: 'string' } } }),
        '304': NOT_MODIFIED,
      },
    },
  },
  '/manifest/sign': {
    post: {
      tags: ['manifest'],
      summary: "Sign a manifest URL inside the tenant's effective allowlist (tenant tokens only)",
      body: SignRequestSchema,
      responses: {
        '200': json(SignResponseSchema, 'A compact JWS (ES256) and its claims', {}),
        '400': problem(
          'Not an http(s) URL, a URL with credentials, an encoded / or \\ (%2F, %5C), a backslash, white space or a control character (invalid_url); bad JSON (invalid_json, json_too_deep)',
        ),
        '401': UNAUTHORIZED,
        '403': problem('The URL is outside the allowlist (origin_not_allowed), a foreign streamId (forbidden_stream), an operator token (tenant_only)'),
        '413': problem('A body over 64 KiB'),
        '415': problem('A body that is not application/json'),
      },
    },
  },
  '/control/tenants': { get: operatorGet('Every tenant: ids, name, rates, origins, streams, last report', 'tenants:read', TenantListSchema) },
  '/control/tenants/{id}': {
    get: operatorGet('One tenant, by tenant id or customerId', 'tenants:read', TenantDetailSchema, { '404': problem('Unknown tenant (tenant_not_found)') }, {
      parameters: [pathParam('id', 'tenant id (t_…) or customerId')],
    }),
  },
  '/billing/summary': {
    get: operatorGet('Per customer for a period: offloaded GB, avoided CDN cost, fee, net savings', 'billing:read', BillingSummarySchema, { '400': problem('A bad period (invalid_period)') }, { query: PeriodQuery }),
  },
  '/billing/usage/{customerId}': {
    get: operatorGet("A customer's daily usage for a period", 'billing:read', BillingUsageSchema, { '400': problem('A bad period'), '404': problem('Unknown customer (customer_not_found)') }, {
      parameters: [pathParam('customerId', 'customer id')],
      query: PeriodQuery,
    }),
  },
  '/billing/invoices': { get: operatorGet('Invoices: one per customer per closed month with usage', 'billing:read', InvoiceListSchema, {}, { query: InvoicesQuery }) },
  '/billing/invoices/{id}': {
    get: operatorGet('One invoice, with a line per stream', 'billing:read', InvoiceSchema, { '404': problem('No such invoice (invoice_not_found)') }, {
      parameters: [pathParam('id', 'inv_<customerId>_<YYYY-MM>')],
    }),
  },
  '/metrics': {
    get: {
      tags: ['operators', 'service'],
      summary:
        'Prometheus metrics of this API process (operators, telemetry:read; 403 for tenant tokens). A scraper without a token uses the METRICS_PORT listener instead (docs/operations.md).',
      responses: {
        '200': { description: 'Prometheus text exposition format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } },
        '401': UNAUTHORIZED,
        '403': problem('A tenant token (operator_only), or a missing capability'),
      },
    },
  },
  '/billing/customers/{customerId}': {
    get: operatorGet("A customer's rates and current-month figures", 'billing:read', CustomerBillingSchema, { '404': problem('Unknown customer (customer_not_found)') }, {
      parameters: [pathParam('customerId', 'customer id')],
    }),
  },
};

/** The control routes of alerts and webhooks: a tenant's own; an operator names the tenant with customerId. */
const CUSTOMER_PARAM: Json = { name: 'customerId', in: 'query', required: false, description: 'operators only (required for them): the tenant to act for', schema: { type: 'string' } };
const ID_PARAM = pathParam('id', 'the id');
const CONTROL_ERRORS: Json = {
  '401': UNAUTHORIZED,
  '403': problem('A stream of another customer (forbidden_stream)'),
  '404': problem('No such rule, endpoint or delivery of the tenant (alert_rule_not_found, webhook_not_found, delivery_not_found), or an unknown tenant (tenant_not_found)'),
};
const BODY_ERRORS: Json = {
  '413': problem('A body over 64 KiB'),
  '415': problem('A body that is not application/json'),
};
const ruleOp = (summary: string, responses: Json, more: Partial<Operation> = {}): Operation => ({
  tags: ['alerts'], summary, parameters: [CUSTOMER_PARAM, ...(more.parameters ?? [])], ...(more.body ? { body: more.body } : {}), responses: { ...responses, ...CONTROL_ERRORS },
});
const plain = (schema: z.ZodType, description = 'OK'): Json => json(schema, description, {});
const BAD_RULE = problem('Invalid JSON, a rule that breaks a rule (invalid_alert_rule: errors[] with field and reason), or an operator without customerId (customer_id_required)');

const ALERT_OPERATIONS: Record<string, Record<string, Operation>> = {
  '/control/alerts': {
    post: ruleOp('Create an alert rule', { '201': plain(AlertRuleSchema, 'The rule'), '400': BAD_RULE, '409': problem('The tenant has as many rules as allowed (too_many_alert_rules)'), ...BODY_ERRORS }, { body: AlertRuleCreateSchema }),
    get: ruleOp("The tenant's alert rules, each with its state", { '200': plain(AlertRuleListSchema) }),
  },
  '/control/alerts/{id}': {
    get: ruleOp('One rule', { '200': plain(AlertRuleSchema) }, { parameters: [ID_PARAM] }),
    patch: ruleOp('Change a rule (null clears an optional field)', { '200': plain(AlertRuleSchema), '400': BAD_RULE, ...BODY_ERRORS }, { parameters: [ID_PARAM], body: AlertRulePatchSchema }),
    delete: ruleOp('Delete a rule', { '204': { description: 'Deleted' } }, { parameters: [ID_PARAM] }),
  },
  '/control/alerts/{id}/incidents': { get: ruleOp("A rule's incidents, newest first", { '200': plain(IncidentListSchema) }, { parameters: [ID_PARAM] }) },
  '/control/incidents': {
    get: ruleOp("The tenant's incidents, newest first", { '200': plain(IncidentListSchema), '400': problem('A state other than open or resolved (invalid_state)') }, {
      parameters: [{ name: 'state', in: 'query', required: false, schema: { type: 'string', enum: ['open', 'resolved'] } }],
    }),
  },
  '/control/webhooks': {
    post: {
      ...ruleOp('Register a webhook endpoint; its signing secret is shown only in this answer', {
        '201': plain(WebhookWithSecretSchema, 'The endpoint and its secret'),
        '400': problem('A bad URL or event type (invalid_webhook), or a target on a loopback, private, link-local or metadata address (webhook_target_forbidden)'),
        '409': problem('The tenant has as many endpoints as allowed (too_many_webhooks)'),
        ...BODY_ERRORS,
      }, { body: WebhookCreateSchema }),
      tags: ['webhooks'],
    },
    get: { ...ruleOp("The tenant's endpoints, without secrets", { '200': plain(WebhookListSchema) }), tags: ['webhooks'] },
  },
  '/control/webhooks/{id}': { delete: { ...ruleOp('Delete an endpoint', { '204': { description: 'Deleted' } }, { parameters: [ID_PARAM] }), tags: ['webhooks'] } },
  '/control/webhooks/{id}/rotate': {
    post: { ...ruleOp('A new signing secret (shown only here); the previous ones keep signing for the grace period', { '200': plain(WebhookWithSecretSchema) }, { parameters: [ID_PARAM] }), tags: ['webhooks'] },
  },
  '/control/webhooks/{id}/test': {
    post: { ...ruleOp('Send a ping event to the endpoint', { '202': plain(AcceptedDeliverySchema, 'Queued for delivery') }, { parameters: [ID_PARAM] }), tags: ['webhooks'] },
  },
  '/control/webhooks/{id}/deliveries': {
    get: { ...ruleOp("The endpoint's deliveries, newest first, each with every attempt", { '200': plain(DeliveryListSchema) }, { parameters: [ID_PARAM] }), tags: ['webhooks'] },
  },
  '/control/webhooks/{id}/deliveries/{deliveryId}/redeliver': {
    post: {
      ...ruleOp('Send a delivery again (same webhook-id, same body)', { '202': plain(AcceptedDeliverySchema, 'Queued for delivery') }, { parameters: [ID_PARAM, pathParam('deliveryId', 'the delivery id')] }),
      tags: ['webhooks'],
    },
  },
};

function pathItem(path: string, ops: Record<string, Operation>): Json {
  return Object.fromEntries(
    Object.entries(ops).map(([method, op]) => [
      method,
      {
        operationId: operationId(method, path),
        tags: op.tags,
        summary: op.summary,
        ...(op.public ? { security: [] } : {}),
        ...(op.parameters || op.query ? { parameters: [...(op.parameters ?? []), ...(op.query ? queryParameters(op.query) : [])] } : {}),
        ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: ref(op.body) } } } } : {}),
        responses: op.responses,
      },
    ]),
  );
}

export function buildOpenApi(): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Stream Telemetry, Content Origins and Pilot Report API',
      version: '0.1.0',
      description:
        "Figures of peer-assisted delivery, computed from the session reports of the client SDK and served from the published rollup snapshot. Every read is scoped to the caller's customerId. Errors are RFC 9457 problem+json with a stable `code`.",
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'telemetry', description: "Stream figures, series, breakdowns and exports of the served snapshot, scoped to the caller's customer" },
      { name: 'reports', description: 'Pilot reports (JSON, Markdown, HTML): whether a pilot passed and what it saved; their signed statements and the keys that verify them' },
      { name: 'origins', description: "A tenant's allowlist of content origins" },
      { name: 'manifest', description: 'Signed manifest URLs and the public key that verifies them' },
      { name: 'operators', description: 'Routes for operator tokens: tenants, billing, metrics' },
      { name: 'service', description: 'Liveness, readiness and this document' },
      { name: 'alerts', description: 'Alert rules evaluated on every published snapshot, and their incidents' },
      { name: 'webhooks', description: 'Webhook endpoints that receive signed incident events (Standard Webhooks)' },
    ],
    paths: Object.fromEntries(Object.entries({ ...OPERATIONS, ...ALERT_OPERATIONS }).map(([p, ops]) => [p, pathItem(p, ops)])),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A tenant token (`cli token --customer ID`) or an operator token (`cli token --role operator`).',
        },
      },
      headers: {
        ETag: { description: 'Strong validator of this representation in this snapshot', schema: { type: 'string' } },
        LastModified: { description: 'The snapshot asOf (HTTP date)', schema: { type: 'string' } },
        RequestId: { description: 'Request id, also in the server logs', schema: { type: 'string' } },
      },
      responses: { NotModified: { description: 'The representation matching If-None-Match is still current' } },
      // Every zod schema with an id, referencing each other by name.
      schemas: registryToJsonSchemas(z.globalRegistry, '#/components/schemas/'),
    },
  };
}

export const OPENAPI = buildOpenApi();

/** Serialised once. */
export const OPENAPI_JSON = Buffer.from(JSON.stringify(OPENAPI));
