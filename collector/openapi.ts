// The collector's own OpenAPI 3.1 document, served at GET /openapi.json of the collector: it is a
// separate server (its own port, its own keys), so its route is not in the tenant API's document.
// The report schema is derived from the column catalog, like the validation itself.
import { REPORT_COLUMNS, type ReportColumn } from '../warehouse/session-reports/index.ts';
import { MAX_MAP_ENTRIES, MAX_TEXT_LENGTH } from './session-report-schema.ts';
import { SESSION_REPORTS_PATH } from './route.ts';
import { withOperationIds } from '../lib/operation-ids.ts';

type Json = Record<string, unknown>;
const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const problem = (description: string, headers: Json = {}): Json => ({
  description,
  headers: { 'X-Request-Id': { schema: { type: 'string' } }, ...headers },
  content: { 'application/problem+json': { schema: ref('Problem') } },
});
const retryAfter = { 'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } } };

function columnSchema(col: ReportColumn): Json {
  switch (col.family) {
    case 'string':
      return col.name === 'streamId'
        ? { type: 'string', pattern: '^[a-z0-9_-]{1,64}:[A-Za-z0-9._~-]{1,128}$' }
        : { type: 'string', minLength: 1, maxLength: MAX_TEXT_LENGTH };
    case 'integer':
      return { type: 'integer', minimum: 0, description: col.type };
    case 'float':
      return { type: 'number', minimum: 0 };
    case 'boolean':
      return { type: 'boolean' };
    case 'timestamp':
      return {
        oneOf: [{ type: 'string', format: 'date-time' }, { type: 'number', description: 'epoch milliseconds' }],
        description: 'end of the interval; at most 10 minutes ahead of the collector clock and within the late-data horizon (default 35 days)',
      };
    case 'map':
      return { type: 'object', maxProperties: MAX_MAP_ENTRIES, additionalProperties: { type: 'integer', minimum: 0 } };
  }
}

const SESSION_REPORT: Json = {
  type: 'object',
  description: 'One session report (docs/sdk-ingest.md); unknown fields are ignored.',
  required: REPORT_COLUMNS.filter((c) => c.required).map((c) => c.name),
  properties: Object.fromEntries(
    REPORT_COLUMNS.map((c) => [c.name, c.required ? columnSchema(c) : { oneOf: [columnSchema(c), { type: 'null' }] }]),
  ),
};

const REJECTION: Json = {
  type: 'object',
  required: ['index', 'field', 'reason'],
  properties: { index: { type: 'integer', minimum: 0 }, field: { type: ['string', 'null'] }, reason: { type: 'string' } },
  additionalProperties: false,
};

export const COLLECTOR_OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'p2ptel collector: session reports of the client SDK',
    version: '0.1.0',
    description:
      'Write-only ingest of session reports (docs/sdk-ingest.md). A report is acknowledged only once it is durable; accepted reports land as Parquet in the warehouse. Errors are RFC 9457 problem+json with a stable `code`.',
  },
  servers: [{ url: '/' }],
  security: [{ ingestKey: [] }, { ingestKeyQuery: [] }],
  paths: withOperationIds({
    [SESSION_REPORTS_PATH]: {
      post: {
        summary: 'Post a batch of session reports',
        requestBody: {
          required: true,
          description: 'At most 1 MiB on the wire (gzip allowed), 8 MiB decompressed, 2,000 reports (configurable).',
          content: {
            'application/json': { schema: { oneOf: [{ type: 'object', required: ['reports'], properties: { reports: { type: 'array', items: ref('SessionReport') } } }, { type: 'array', items: ref('SessionReport') }] } },
            'application/x-ndjson': { schema: { type: 'string', description: 'one report per line' } },
            'text/plain': { schema: { type: 'string', description: 'JSON as for application/json (navigator.sendBeacon)' } },
          },
        },
        parameters: [
          { name: 'Content-Encoding', in: 'header', schema: { type: 'string', enum: ['gzip', 'identity'] } },
        ],
        responses: {
          '202': {
            description: 'The valid reports are durable; invalid ones are listed (do not resend them).',
            headers: { 'X-Request-Id': { schema: { type: 'string' } } },
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['accepted', 'rejected'],
                  properties: { accepted: { type: 'integer', minimum: 0 }, rejected: { type: 'array', items: REJECTION } },
                  additionalProperties: false,
                },
              },
            },
          },
          '400': {
            description: 'The body cannot be parsed, or no report in it is valid (nothing stored; do not retry)',
            headers: { 'X-Request-Id': { schema: { type: 'string' } } },
            content: {
              'application/problem+json': {
                schema: { allOf: [ref('Problem')], properties: { accepted: { const: 0 }, rejected: { type: 'array', items: REJECTION } } },
              },
            },
          },
          '401': problem('Missing key, or a refused one (unknown, revoked, or its tenant is gone: the same answer for each)'),
          '403': problem("A report of another customer's stream: nothing stored"),
          '405': problem('Only POST (and the CORS preflight)'),
          '413': problem('Body, decompressed body or report count over the limit, or a batch that took longer than allowed to check'),
          '415': problem('Media type or content encoding not accepted'),
          '429': problem("The ingest key's rate (reports, inflated bytes or checking time per second), or too many refused keys from this address; retry after Retry-After", retryAfter),
          '501': problem('A transfer coding other than chunked'),
          '503': problem('The collector cannot keep more now, or cannot write (it tries again on its own); retry after Retry-After', retryAfter),
        },
      },
      options: {
        summary: 'CORS preflight (any origin)',
        security: [],
        responses: { '204': { description: 'Allowed methods and headers' } },
      },
    },
    '/healthz': {
      get: {
        summary: 'Liveness',
        security: [],
        responses: { '200': { description: 'Alive', content: { 'application/json': { schema: { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } } } } } },
      },
    },
    '/readyz': {
      get: {
        summary: 'Readiness: the spool takes writes and has room',
        security: [],
        responses: {
          '200': {
            description: 'Ready',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['status', 'spool'],
                  properties: { status: { const: 'ready' }, spool: { type: 'object', required: ['bytes', 'sealedSegments'], properties: { bytes: { type: 'integer' }, sealedSegments: { type: 'integer' } } } },
                },
              },
            },
          },
          '503': problem('Spool full or failed', retryAfter),
        },
      },
    },
    '/openapi.json': {
      get: { summary: 'This document', security: [], responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } } } },
    },
  }),
  components: {
    securitySchemes: {
      ingestKey: { type: 'apiKey', in: 'header', name: 'X-Ingest-Key', description: 'public, write-only key of one customer (`ingest-keys add`)' },
      ingestKeyQuery: { type: 'apiKey', in: 'query', name: 'key', description: 'the same key, for navigator.sendBeacon, which cannot set headers' },
    },
    schemas: {
      SessionReport: SESSION_REPORT,
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
    },
  },
} as const;

/** Serialised once. */
export const COLLECTOR_OPENAPI_JSON = Buffer.from(JSON.stringify(COLLECTOR_OPENAPI));
