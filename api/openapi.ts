// The OpenAPI 3.1 document of the API, served at GET /openapi.json. Written by hand to match the
// routes; a test validates real responses of every route against it.
import { readFileSync } from 'node:fs';
import { EXPORT_FORMATS, EXPORT_MEDIA } from './export/export.ts';
import { REPORT_FORMAT_ALIASES, REPORT_FORMATS } from '../pilot/formats.ts';
import { MAX_REPORT_BUCKET_SECONDS } from './routes/reports.ts';
import { MAX_BUCKETS } from './timeseries.ts';
import { DEFAULT_BUCKET_SECONDS, MAX_BUCKET_SECONDS, MIN_BUCKET_SECONDS, WINDOW_NAMES } from '../warehouse/windows.ts';

type Json = Record<string, unknown>;

/**
 * The pilot report's own JSON Schema (2020-12, as OpenAPI 3.1 uses), embedded whole: its `$id`
 * keeps its internal `#/$defs/...` references resolving inside it.
 */
const PILOT_REPORT_SCHEMA = JSON.parse(readFileSync(new URL('../pilot/pilot-report.schema.json', import.meta.url), 'utf8')) as Json;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const problem = (description: string): Json => ({
  description,
  content: { 'application/problem+json': { schema: ref('Problem') } },
});
const json = (schema: Json, description = 'OK'): Json => ({
  description,
  headers: {
    ETag: { $ref: '#/components/headers/ETag' },
    'Last-Modified': { $ref: '#/components/headers/LastModified' },
    'X-Request-Id': { $ref: '#/components/headers/RequestId' },
  },
  content: { 'application/json': { schema } },
});

const nonNegInt = { type: 'integer', minimum: 0 };
const nonNeg = { type: 'number', minimum: 0 };
const ratio = { type: 'number', minimum: 0, maximum: 1 };
const isoMs = { type: 'string', format: 'date-time', description: 'ISO 8601 UTC with milliseconds' };

const SUMMARY_PROPS = {
  streamId: { type: 'string', description: '`<customerId>:<name>`' },
  totalSessions: { ...nonNegInt, description: 'distinct sessions with a report in the window' },
  totalBytesOffloaded: { ...nonNegInt, description: 'bytes delivered by peers' },
  totalBytesFallback: { ...nonNegInt, description: 'bytes delivered by the CDN' },
  avgOffloadRatio: { ...ratio, description: 'peer bytes / all bytes, byte-weighted; 0 when nothing was delivered' },
  avgPeerCount: { ...nonNeg, description: "mean over sessions of each session's mean peer count" },
  avgBufferHealth: { ...nonNeg, description: 'mean buffer health over reports, seconds' },
};

/** A refusal that says when to come back (429, 503 of the limits in docs/operations.md). */
const problemRetry = (description: string): Json => ({
  ...problem(description),
  headers: { 'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'string', pattern: '^[0-9]+$' } } },
});

const commonErrors = {
  '401': problem('Missing, malformed, badly signed, expired or revoked token, or a token of a removed tenant (with WWW-Authenticate)'),
  '503': problemRetry('No snapshot published yet (snapshot_unavailable), or the request timed out (timeout), with Retry-After'),
};

const windowParam = { $ref: '#/components/parameters/window' };

/** An operator route: its responses besides 200, with the 403 of rule 6 for tenant tokens. */
function operatorGet(summary: string, capability: string, schema: string, extra: Json = {}, params: Json[] = []): Json {
  return {
    get: {
      tags: ['operators'],
      summary: `${summary} (operators, ${capability}; 403 for every tenant token, whatever customer it names)`,
      ...(params.length > 0 ? { parameters: params } : {}),
      responses: {
        '200': { description: 'OK', content: { 'application/json': { schema: ref(schema) } } },
        '401': commonErrors['401'],
        '403': problem('A tenant token (operator_only), or a missing capability'),
        '503': commonErrors['503'],
        ...extra,
      },
    },
  };
}

const periodParams = [
  { name: 'from', in: 'query', description: 'first day (UTC), YYYY-MM-DD; default the first of the month of `to`', schema: { type: 'string', format: 'date' } },
  { name: 'to', in: 'query', description: "last day (UTC), YYYY-MM-DD, included; default the snapshot's day", schema: { type: 'string', format: 'date' } },
];
const pathParam = (name: string, description: string) => ({ name, in: 'path', required: true, description, schema: { type: 'string' } });
const money = { type: 'number', minimum: 0, description: 'USD, to the micro-dollar' };
const billingTotalsProps = {
  currency: { const: 'USD' },
  cdnPricePerGb: nonNeg,
  savingsSharePct: { type: 'number', minimum: 0, maximum: 100 },
  assumedRate: { type: 'boolean', description: 'no CDN rate on file: the platform default was used' },
  bytesOffloaded: nonNegInt,
  bytesFallback: nonNegInt,
  offloadedGb: nonNeg,
  avoidedCdnCost: money,
  fee: money,
  netSavings: money,
};

export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'Stream Telemetry, Content Origins and Pilot Report API',
    version: '0.1.0',
    description:
      'Figures of peer-assisted delivery, computed from the session reports of the client SDK and served from the published rollup snapshot. Every read is scoped to the caller\'s customerId. Errors are RFC 9457 problem+json with a stable `code`.',
  },
  servers: [{ url: '/' }],
  security: [{ bearerAuth: [] }],
  tags: [{ name: 'telemetry' }, { name: 'reports' }, { name: 'origins' }, { name: 'manifest' }, { name: 'operators' }, { name: 'service' }],
  paths: {
    '/healthz': {
      get: {
        tags: ['service'],
        summary: 'Liveness',
        security: [],
        responses: { '200': { description: 'Alive', content: { 'application/json': { schema: ref('Health') } } } },
      },
    },
    '/readyz': {
      get: {
        tags: ['service'],
        summary: 'Readiness: a snapshot is loaded',
        security: [],
        responses: {
          '200': { description: 'Ready', content: { 'application/json': { schema: ref('Ready') } } },
          '503': problem('No snapshot loaded yet (snapshot_unavailable)'),
        },
      },
    },
    '/openapi.json': {
      get: {
        tags: ['service'],
        summary: 'This document',
        security: [],
        responses: { '200': { description: 'The OpenAPI document', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
    '/telemetry/streams': {
      get: {
        tags: ['telemetry'],
        summary: "The caller's streams with at least one report in the window, sorted by id",
        parameters: [windowParam, { $ref: '#/components/parameters/detail' }],
        responses: {
          '200': json(ref('StreamList')),
          '304': { $ref: '#/components/responses/NotModified' },
          '400': problem('Bad window or detail (invalid_window, invalid_detail)'),
          '403': problem('Missing capability'),
          ...commonErrors,
        },
      },
    },
    '/telemetry/metrics': {
      get: {
        tags: ['telemetry', 'operators'],
        summary: 'Platform-wide metrics for a window, and per customer with groupBy=customer (operators only; 403 for tenants)',
        parameters: [windowParam, { name: 'groupBy', in: 'query', schema: { type: 'string', enum: ['customer'] } }],
        responses: {
          '200': json(ref('PlatformMetrics')),
          '304': { $ref: '#/components/responses/NotModified' },
          '400': problem('Bad window or groupBy'),
          '403': problem('A tenant token (operator_only)'),
          ...commonErrors,
        },
      },
    },
    '/telemetry/metrics/{streamId}': {
      get: {
        tags: ['telemetry'],
        summary: 'Metrics of one stream over a window (zeros when it has reports, but none in the window)',
        parameters: [{ $ref: '#/components/parameters/streamIdPath' }, windowParam],
        responses: {
          '200': json(ref('StreamMetrics')),
          '304': { $ref: '#/components/responses/NotModified' },
          '400': problem('Bad window'),
          '403': problem('The stream is not attributed to the caller (forbidden_stream)'),
          '404': problem('A stream of the caller that has never reported (stream_not_found)'),
          ...commonErrors,
        },
      },
    },
    '/telemetry/timeseries': {
      get: {
        tags: ['telemetry'],
        summary: 'Bucketed series of one stream: whole aligned buckets, empty ones with zeros',
        parameters: [
          { $ref: '#/components/parameters/streamIdQuery' },
          {
            name: 'bucketSeconds',
            in: 'query',
            description: `Seconds per bucket; ${MIN_BUCKET_SECONDS}–${MAX_BUCKET_SECONDS}. 60, 300, 600, 3600, 21600 and 86400 are precomputed; others are computed on demand.`,
            schema: { type: 'integer', minimum: MIN_BUCKET_SECONDS, maximum: MAX_BUCKET_SECONDS, default: DEFAULT_BUCKET_SECONDS },
          },
          windowParam,
        ],
        responses: {
          '200': json(ref('Timeseries')),
          '304': { $ref: '#/components/responses/NotModified' },
          '400': problem(`Bad bucketSeconds or window, or more than ${MAX_BUCKETS} buckets (too_many_buckets)`),
          '403': problem('No streamId (stream_id_required), or a stream not attributed to the caller (forbidden_stream)'),
          '404': problem('A stream of the caller that has never reported'),
          ...commonErrors,
          '429': problemRetry('The caller already has as many on-demand series (non-standard bucketSeconds) in progress as allowed (too_many_requests)'),
          '503': problemRetry(
            'No snapshot yet (snapshot_unavailable); an on-demand series not computed within the query timeout counted from the request\'s arrival (timeout); too much on-demand work queued on the server (busy)',
          ),
        },
      },
    },
    '/telemetry/export': {
      get: {
        tags: ['telemetry'],
        summary: 'Download the deduplicated session reports of one stream in a window (streamed)',
        parameters: [
          { $ref: '#/components/parameters/streamIdQuery' },
          windowParam,
          { name: 'format', in: 'query', schema: { type: 'string', enum: [...EXPORT_FORMATS], default: 'csv' } },
        ],
        responses: {
          '200': {
            description:
              'The records, with the columns of the session report contract (maps as JSON text in CSV), as an attachment: Content-Disposition: attachment; filename="<customer>_<stream>_<window>.<ext>"',
            headers: {
              'Content-Disposition': { schema: { type: 'string' } },
              ETag: { $ref: '#/components/headers/ETag' },
              'Last-Modified': { $ref: '#/components/headers/LastModified' },
            },
            content: Object.fromEntries(
              EXPORT_FORMATS.map((f) => [EXPORT_MEDIA[f].type.split(';')[0], { schema: { type: 'string', format: f === 'csv' || f === 'ndjson' ? undefined : 'binary' } }]),
            ),
          },
          '304': { $ref: '#/components/responses/NotModified' },
          '400': problem('Bad window or format (invalid_window, invalid_format); checked before any work starts'),
          '403': problem('No streamId (stream_id_required), or a stream not attributed to the caller'),
          '404': problem('A stream of the caller that has never reported'),
          ...commonErrors,
          '429': problemRetry('The caller (or the server) already runs as many exports as allowed (too_many_exports)'),
          '503': problemRetry('No snapshot yet (snapshot_unavailable), or the first day of the export took longer than its query timeout (timeout)'),
        },
      },
    },
    '/control/reports/pilot/{streamId}': {
      get: {
        tags: ['reports'],
        summary:
          "The pilot report of one of the caller's streams at the snapshot: JSON, a Markdown download or a self-contained HTML page (the nightly run's pre-rendered file when it matches, rendered on demand otherwise: the same bytes)",
        parameters: [
          { $ref: '#/components/parameters/streamIdPath' },
          {
            name: 'format',
            in: 'query',
            description: '`markdown` is another name for `md`',
            schema: { type: 'string', enum: [...REPORT_FORMATS, ...Object.keys(REPORT_FORMAT_ALIASES)], default: 'json' },
          },
          {
            name: 'bucketSeconds',
            in: 'query',
            description: 'bucket size of the series and charts',
            schema: { type: 'integer', minimum: MIN_BUCKET_SECONDS, maximum: MAX_REPORT_BUCKET_SECONDS, default: DEFAULT_BUCKET_SECONDS },
          },
        ],
        responses: {
          '200': {
            description:
              'The report. md: `Content-Disposition: attachment; filename="pilot-report-<customer>-<name>.md"`, operator-judgement lines blank. html: one page with inline CSS and SVG charts, served with a Content-Security-Policy that lets it load nothing.',
            headers: {
              ETag: { $ref: '#/components/headers/ETag' },
              'Last-Modified': { $ref: '#/components/headers/LastModified' },
              'X-Report-Source': { description: '`prerendered` (the nightly run\'s file) or `rendered` (on demand)', schema: { type: 'string', enum: ['prerendered', 'rendered'] } },
              'Content-Disposition': { description: 'md only', schema: { type: 'string' } },
            },
            content: {
              'application/json': { schema: ref('PilotReport') },
              'text/markdown': { schema: { type: 'string' } },
              'text/html': { schema: { type: 'string' } },
            },
          },
          '304': { $ref: '#/components/responses/NotModified' },
          '400': problem('Bad format or bucketSeconds (invalid_format, invalid_bucket_seconds)'),
          '403': problem('The stream is not attributed to the caller (forbidden_stream), or the token lacks telemetry:read'),
          '404': problem('A stream of the caller that has never reported (stream_not_found)'),
          ...commonErrors,
        },
      },
    },
    '/control/tenants/{id}/origins': {
      parameters: [
        { name: 'id', in: 'path', required: true, description: 'tenant id (t_…) or customerId', schema: { type: 'string' } },
      ],
      get: {
        tags: ['origins'],
        summary: "A tenant's allowlist of content origins (a tenant token: its own only; an operator: any)",
        responses: {
          '200': {
            description: 'The stored list, normalised',
            headers: { ETag: { description: 'Version of the list, for If-Match', schema: { type: 'string' } } },
            content: { 'application/json': { schema: ref('Origins') } },
          },
          '304': { $ref: '#/components/responses/NotModified' },
          '401': commonErrors['401'],
          '403': problem("Another tenant's id, whether or not it exists (forbidden_tenant)"),
          '404': problem('No tenant with this id (tenant_not_found)'),
        },
      },
      put: {
        tags: ['origins'],
        summary: 'Replace the whole list atomically; the empty array clears it (the platform default list then applies)',
        parameters: [{ name: 'If-Match', in: 'header', required: false, description: 'the ETag of the list read before (optional)', schema: { type: 'string' } }],
        requestBody: { required: true, content: { 'application/json': { schema: ref('OriginsPut') } } },
        responses: {
          '200': {
            description: 'The stored list',
            headers: { ETag: { description: 'Version of the new list', schema: { type: 'string' } } },
            content: { 'application/json': { schema: ref('Origins') } },
          },
          '400': {
            description:
              'Invalid JSON (invalid_json), JSON nested more than 32 levels (json_too_deep), or invalid entries (invalid_origins, each listed with index, value and reason, at most 100, nested values only named); nothing stored',
            content: { 'application/problem+json': { schema: ref('InvalidOriginsProblem') } },
          },
          '401': commonErrors['401'],
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
        security: [],
        responses: {
          '200': {
            description: 'Exactly { kty, crv, x, y, use, alg }',
            headers: { 'Cache-Control': { schema: { type: 'string' } }, ETag: { schema: { type: 'string' } } },
            content: { 'application/json': { schema: ref('PublicKey') } },
          },
          '304': { $ref: '#/components/responses/NotModified' },
        },
      },
    },
    '/manifest/sign': {
      post: {
        tags: ['manifest'],
        summary: "Sign a manifest URL inside the tenant's effective allowlist (tenant tokens only)",
        requestBody: { required: true, content: { 'application/json': { schema: ref('SignRequest') } } },
        responses: {
          '200': { description: 'A compact JWS (ES256) and its claims', content: { 'application/json': { schema: ref('SignResponse') } } },
          '400': problem(
            'Not an http(s) URL, a URL with credentials, an encoded / or \\ (%2F, %5C), a backslash, white space or a control character (invalid_url); bad JSON (invalid_json, json_too_deep)',
          ),
          '401': commonErrors['401'],
          '403': problem('The URL is outside the allowlist (origin_not_allowed), a foreign streamId (forbidden_stream), an operator token (tenant_only)'),
          '413': problem('A body over 64 KiB'),
          '415': problem('A body that is not application/json'),
        },
      },
    },
    '/control/tenants': operatorGet('Every tenant: ids, name, rates, origins, streams, last report', 'tenants:read', 'TenantList'),
    '/control/tenants/{id}': operatorGet('One tenant, by tenant id or customerId', 'tenants:read', 'TenantDetail', { '404': problem('Unknown tenant (tenant_not_found)') }, [
      pathParam('id', 'tenant id (t_…) or customerId'),
    ]),
    '/billing/summary': operatorGet('Per customer for a period: offloaded GB, avoided CDN cost, fee, net savings', 'billing:read', 'BillingSummary', { '400': problem('A bad period (invalid_period)') }, periodParams),
    '/billing/usage/{customerId}': operatorGet("A customer's daily usage for a period", 'billing:read', 'BillingUsage', { '400': problem('A bad period'), '404': problem('Unknown customer (customer_not_found)') }, [
      pathParam('customerId', 'customer id'),
      ...periodParams,
    ]),
    '/billing/invoices': operatorGet('Invoices: one per customer per closed month with usage', 'billing:read', 'InvoiceList', {}, [
      { name: 'customerId', in: 'query', description: "only this customer's", schema: { type: 'string' } },
    ]),
    '/billing/invoices/{id}': operatorGet('One invoice, with a line per stream', 'billing:read', 'Invoice', { '404': problem('No such invoice (invoice_not_found)') }, [
      pathParam('id', 'inv_<customerId>_<YYYY-MM>'),
    ]),
    '/billing/customers/{customerId}': operatorGet("A customer's rates and current-month figures", 'billing:read', 'CustomerBilling', { '404': problem('Unknown customer (customer_not_found)') }, [
      pathParam('customerId', 'customer id'),
    ]),
  },
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
    responses: {
      NotModified: { description: 'The representation matching If-None-Match is still current' },
    },
    parameters: {
      window: {
        name: 'window',
        in: 'query',
        description: 'A window counts the reports with asOf − window < ts ≤ asOf (asOf: the snapshot time).',
        schema: { type: 'string', enum: [...WINDOW_NAMES], default: '24h' },
      },
      detail: { name: 'detail', in: 'query', description: '1 or true for stream summaries', schema: { type: 'string', enum: ['1', 'true', '0', 'false'] } },
      streamIdPath: {
        name: 'streamId',
        in: 'path',
        required: true,
        description: '`<customerId>:<name>`; the colon raw or percent-encoded (%3A)',
        schema: { type: 'string' },
      },
      streamIdQuery: {
        name: 'streamId',
        in: 'query',
        description: 'One of the caller\'s streams (required: without it the request is refused with 403)',
        schema: { type: 'string' },
      },
    },
    schemas: {
      PilotReport: PILOT_REPORT_SCHEMA,
      Problem: {
        type: 'object',
        required: ['type', 'title', 'status', 'detail', 'code'],
        properties: {
          type: { type: 'string', format: 'uri-reference' },
          title: { type: 'string' },
          status: { type: 'integer', minimum: 400, maximum: 599 },
          detail: { type: 'string' },
          code: { type: 'string', pattern: '^[a-z_]+$' },
        },
      },
      InvalidOriginsProblem: {
        allOf: [ref('Problem')],
        properties: {
          errors: {
            type: 'array',
            items: {
              type: 'object',
              required: ['index', 'value', 'reason'],
              properties: { index: { type: ['integer', 'null'] }, value: {}, reason: { type: 'string' } },
            },
          },
        },
      },
      Origins: {
        type: 'object',
        required: ['origins'],
        properties: {
          origins: { type: 'array', maxItems: 500, items: { type: 'string', format: 'uri', maxLength: 2048 } },
          tenantId: { type: 'string' },
          customerId: { type: 'string' },
          updatedAt: { oneOf: [isoMs, { type: 'null' }] },
          platformDefaultApplies: { type: 'boolean', description: 'the list is empty: signing enforces the platform default list' },
          platformDefault: { type: 'array', items: { type: 'string', format: 'uri' } },
        },
        additionalProperties: false,
      },
      OriginsPut: {
        type: 'object',
        required: ['origins'],
        properties: {
          origins: {
            type: 'array',
            maxItems: 500,
            description: 'absolute http(s) URLs with a host, optional port and path; no credentials, query or fragment; stored normalised and de-duplicated',
            items: { type: 'string', maxLength: 2048 },
          },
        },
      },
      PublicKey: {
        type: 'object',
        required: ['kty', 'crv', 'x', 'y', 'use', 'alg'],
        properties: {
          kty: { const: 'EC' },
          crv: { const: 'P-256' },
          x: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
          y: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
          use: { const: 'sig' },
          alg: { const: 'ES256' },
        },
        additionalProperties: false,
      },
      SignRequest: {
        type: 'object',
        required: ['url'],
        properties: { url: { type: 'string', format: 'uri' }, streamId: { type: 'string', description: 'optional: one of the caller\'s streams, carried in the payload' } },
      },
      SignResponse: {
        type: 'object',
        required: ['jws', 'url', 'customerId', 'iat', 'exp', 'issuedAt', 'expiresAt'],
        properties: {
          jws: { type: 'string', pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$', description: 'compact JWS, ES256, over { url, customerId, streamId?, iat, exp }' },
          url: { type: 'string', description: 'the normalised URL that the allowlist checked (lower-case scheme and host, default port dropped, dot segments resolved): what the JWS signs' },
          customerId: { type: 'string' },
          streamId: { type: 'string' },
          iat: { type: 'integer' },
          exp: { type: 'integer' },
          issuedAt: isoMs,
          expiresAt: isoMs,
        },
        additionalProperties: false,
      },
      Health: { type: 'object', required: ['status'], properties: { status: { const: 'ok' } }, additionalProperties: false },
      Ready: {
        type: 'object',
        required: ['status', 'snapshot', 'asOf'],
        properties: { status: { const: 'ready' }, snapshot: { type: 'string' }, asOf: isoMs },
        additionalProperties: false,
      },
      StreamSummary: {
        type: 'object',
        required: [...Object.keys(SUMMARY_PROPS), 'activePeers', 'live', 'lastSeenAt'],
        properties: {
          ...SUMMARY_PROPS,
          activePeers: { ...nonNegInt, description: 'sessions whose latest report is at most 120 s old at asOf and not final' },
          live: { type: 'boolean', description: 'activePeers > 0' },
          lastSeenAt: { oneOf: [isoMs, { type: 'null' }], description: 'time of the latest report' },
        },
        additionalProperties: false,
      },
      StreamList: {
        type: 'object',
        required: ['streams'],
        properties: {
          window: { type: 'string', enum: [...WINDOW_NAMES] },
          asOf: isoMs,
          streams: {
            anyOf: [
              { type: 'array', items: { type: 'string' }, description: 'without detail: stream ids' },
              { type: 'array', items: ref('StreamSummary'), description: 'with detail: stream summaries' },
            ],
          },
        },
        additionalProperties: false,
      },
      StreamMetrics: {
        type: 'object',
        required: Object.keys(SUMMARY_PROPS),
        properties: { ...SUMMARY_PROPS, window: { type: 'string', enum: [...WINDOW_NAMES] }, asOf: isoMs },
        additionalProperties: false,
      },
      PlatformMetrics: {
        type: 'object',
        required: ['window', 'asOf', 'streams', 'totalSessions', 'totalBytesOffloaded', 'totalBytesFallback', 'avgOffloadRatio', 'avgPeerCount', 'avgBufferHealth', 'activePeers', 'live', 'lastSeenAt'],
        properties: {
          window: { type: 'string', enum: [...WINDOW_NAMES] },
          asOf: isoMs,
          streams: { ...nonNegInt, description: 'streams with a report in the window' },
          ...Object.fromEntries(Object.entries(SUMMARY_PROPS).filter(([k]) => k !== 'streamId')),
          activePeers: nonNegInt,
          live: { type: 'boolean' },
          lastSeenAt: { oneOf: [isoMs, { type: 'null' }] },
          customers: {
            type: 'array',
            description: 'with groupBy=customer: the same figures per customer that reported in the window',
            items: {
              type: 'object',
              required: ['customerId', 'streams', 'totalSessions', 'totalBytesOffloaded', 'totalBytesFallback', 'avgOffloadRatio'],
              properties: {
                customerId: { type: 'string' },
                streams: nonNegInt,
                ...Object.fromEntries(Object.entries(SUMMARY_PROPS).filter(([k]) => k !== 'streamId')),
                activePeers: nonNegInt,
                live: { type: 'boolean' },
                lastSeenAt: { oneOf: [isoMs, { type: 'null' }] },
              },
              additionalProperties: false,
            },
          },
        },
        additionalProperties: false,
      },
      TenantList: {
        type: 'object',
        required: ['asOf', 'tenants'],
        properties: { asOf: { oneOf: [isoMs, { type: 'null' }] }, tenants: { type: 'array', items: ref('TenantInfo') } },
        additionalProperties: false,
      },
      TenantInfo: {
        type: 'object',
        required: ['id', 'customerId', 'name', 'cdnPricePerGb', 'savingsSharePct', 'createdAt', 'originsCount', 'streams', 'lastReportAt'],
        properties: {
          id: { type: 'string' },
          customerId: { type: 'string' },
          name: { type: 'string' },
          cdnPricePerGb: { oneOf: [nonNeg, { type: 'null' }], description: 'null: none on file, the platform default is assumed' },
          savingsSharePct: { type: 'number', minimum: 0, maximum: 100 },
          createdAt: isoMs,
          originsCount: nonNegInt,
          streams: { ...nonNegInt, description: 'streams that have reported' },
          lastReportAt: { oneOf: [isoMs, { type: 'null' }] },
        },
      },
      TenantDetail: {
        allOf: [ref('TenantInfo')],
        required: ['asOf', 'streamIds'],
        properties: { asOf: { oneOf: [isoMs, { type: 'null' }] }, streamIds: { type: 'array', items: { type: 'string' } } },
      },
      BillingTotals: { type: 'object', required: Object.keys(billingTotalsProps), properties: billingTotalsProps },
      LineItem: {
        type: 'object',
        required: ['streamId', 'bytesOffloaded', 'bytesFallback', 'offloadedGb', 'avoidedCdnCost', 'fee', 'netSavings'],
        properties: { streamId: { type: 'string' }, bytesOffloaded: nonNegInt, bytesFallback: nonNegInt, offloadedGb: nonNeg, avoidedCdnCost: money, fee: money, netSavings: money },
        additionalProperties: false,
      },
      BillingSummary: {
        type: 'object',
        required: ['from', 'to', 'asOf', 'currency', 'customers', 'totals'],
        properties: {
          from: { type: 'string', format: 'date' },
          to: { type: 'string', format: 'date' },
          asOf: isoMs,
          currency: { const: 'USD' },
          customers: {
            type: 'array',
            items: {
              allOf: [ref('BillingTotals')],
              required: ['customerId', 'tenantId', 'name'],
              properties: { customerId: { type: 'string' }, tenantId: { type: ['string', 'null'] }, name: { type: ['string', 'null'] } },
            },
          },
          totals: {
            type: 'object',
            required: ['bytesOffloaded', 'offloadedGb', 'avoidedCdnCost', 'fee', 'netSavings'],
            properties: { bytesOffloaded: nonNegInt, offloadedGb: nonNeg, avoidedCdnCost: money, fee: money, netSavings: money },
          },
        },
        additionalProperties: false,
      },
      BillingUsage: {
        type: 'object',
        required: ['customerId', 'from', 'to', 'asOf', 'days', 'totals'],
        properties: {
          customerId: { type: 'string' },
          from: { type: 'string', format: 'date' },
          to: { type: 'string', format: 'date' },
          asOf: isoMs,
          days: {
            type: 'array',
            items: {
              type: 'object',
              required: ['date', 'bytesOffloaded', 'bytesFallback', 'offloadedGb', 'avoidedCdnCost', 'fee', 'netSavings'],
              properties: { date: { type: 'string', format: 'date' }, bytesOffloaded: nonNegInt, bytesFallback: nonNegInt, offloadedGb: nonNeg, avoidedCdnCost: money, fee: money, netSavings: money },
              additionalProperties: false,
            },
          },
          totals: ref('BillingTotals'),
        },
        additionalProperties: false,
      },
      InvoiceSummary: {
        type: 'object',
        required: ['id', 'customerId', 'tenantId', 'month', 'period', 'status', 'currency', 'amount', 'amountDueCents', 'offloadedGb', 'avoidedCdnCost', 'netSavings', 'assumedRate'],
        properties: {
          id: { type: 'string', pattern: '^inv_[a-z0-9_-]+_\\d{4}-\\d{2}$' },
          customerId: { type: 'string' },
          tenantId: { type: ['string', 'null'] },
          month: { type: 'string', pattern: '^\\d{4}-\\d{2}$' },
          period: { type: 'object', required: ['from', 'to'], properties: { from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } } },
          status: { const: 'closed' },
          currency: { const: 'USD' },
          amount: { ...money, description: 'the fee' },
          amountDueCents: { ...nonNegInt, description: 'the amount in whole cents, half up' },
          offloadedGb: nonNeg,
          avoidedCdnCost: money,
          netSavings: money,
          cdnPricePerGb: nonNeg,
          savingsSharePct: { type: 'number' },
          assumedRate: { type: 'boolean' },
          lineItemCount: nonNegInt,
        },
      },
      InvoiceList: {
        type: 'object',
        required: ['asOf', 'invoices'],
        properties: { asOf: isoMs, invoices: { type: 'array', items: ref('InvoiceSummary') } },
        additionalProperties: false,
      },
      Invoice: {
        allOf: [ref('InvoiceSummary')],
        required: ['lineItems', 'asOf'],
        properties: { asOf: isoMs, lineItems: { type: 'array', items: ref('LineItem') } },
      },
      CustomerBilling: {
        type: 'object',
        required: ['customerId', 'tenant', 'rates', 'asOf', 'currentMonth'],
        properties: {
          customerId: { type: 'string' },
          tenant: { oneOf: [{ type: 'object', required: ['id', 'name'], properties: { id: { type: 'string' }, name: { type: 'string' }, createdAt: isoMs } }, { type: 'null' }] },
          rates: {
            type: 'object',
            required: ['cdnPricePerGb', 'cdnPricePerGbOnFile', 'savingsSharePct', 'assumedRate'],
            properties: { cdnPricePerGb: nonNeg, cdnPricePerGbOnFile: { oneOf: [nonNeg, { type: 'null' }] }, savingsSharePct: { type: 'number' }, assumedRate: { type: 'boolean' } },
          },
          asOf: isoMs,
          currentMonth: {
            allOf: [ref('BillingTotals')],
            required: ['from', 'to', 'lineItems'],
            properties: { from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' }, lineItems: { type: 'array', items: ref('LineItem') } },
          },
        },
        additionalProperties: false,
      },
      Bucket: {
        type: 'object',
        required: ['start', 'sessions', 'bytesOffloaded', 'bytesFallback', 'offloadRatio', 'avgPeerCount', 'avgBufferHealth', 'rebufferEvents'],
        properties: {
          start: isoMs,
          sessions: { ...nonNegInt, description: 'distinct sessions that reported in the bucket' },
          bytesOffloaded: nonNegInt,
          bytesFallback: nonNegInt,
          offloadRatio: ratio,
          avgPeerCount: nonNeg,
          avgBufferHealth: nonNeg,
          rebufferEvents: { ...nonNegInt, description: 'sum of stallCount' },
        },
        additionalProperties: false,
      },
      Timeseries: {
        type: 'object',
        required: ['streamId', 'window', 'bucketSeconds', 'from', 'to', 'buckets'],
        properties: {
          streamId: { type: 'string' },
          window: { type: 'string', enum: [...WINDOW_NAMES] },
          bucketSeconds: { type: 'integer', minimum: MIN_BUCKET_SECONDS, maximum: MAX_BUCKET_SECONDS },
          from: { ...isoMs, description: 'start of the bucket holding asOf − window (for all: of the first report)' },
          to: { ...isoMs, description: 'start of the bucket holding asOf' },
          buckets: { type: 'array', maxItems: MAX_BUCKETS, items: ref('Bucket') },
        },
        additionalProperties: false,
      },
    },
  },
} as const;

/** Serialised once. */
export const OPENAPI_JSON = Buffer.from(JSON.stringify(OPENAPI));
