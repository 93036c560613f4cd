// The collector's problems (RFC 9457, docs/api.md "Errors"), built on the shared typed error of
// lib/http so that the request frame answers them. Retry-After says when back-pressure is worth retrying.
import { ApiError } from '../lib/http/problem.ts';
import type { BatchProblem, Rejection } from './batch.ts';

export type KeyProblem = 'missing' | 'malformed' | 'unknown' | 'revoked' | 'no_tenant';

const MISSING_KEY = 'Send an ingest key as "X-Ingest-Key: <key>" (or ?key=<key> with navigator.sendBeacon).';
/** One answer for every refused key: it does not tell a guess apart from a revoked key (the log does). */
const REFUSED_KEY = 'This ingest key is not valid.';

export const ingestProblems = {
  invalidKey: (reason: KeyProblem) =>
    reason === 'missing'
      ? new ApiError(401, 'missing_ingest_key', 'Ingest key required', MISSING_KEY)
      : new ApiError(401, 'invalid_ingest_key', 'Ingest key required', REFUSED_KEY),
  tooManyKeyFailures: (retryAfterSeconds: number) =>
    new ApiError(429, 'too_many_key_failures', 'Too many refused keys', 'Too many requests from this address were refused for their key; retry later.', {}, { 'Retry-After': String(retryAfterSeconds) }),
  unsupportedTransferEncoding: () =>
    new ApiError(501, 'unsupported_transfer_encoding', 'Unsupported transfer coding', 'Send the body as is, or chunked (Transfer-Encoding: chunked); compress it with Content-Encoding: gzip.'),
  tooDeep: (max: number) =>
    new ApiError(400, 'invalid_json', 'Invalid JSON', `The body nests arrays and objects more than ${max} deep; a report needs two levels, its maps three.`, { maxNesting: max }),
  tooCostly: (ms: number) =>
    new ApiError(413, 'too_costly', 'Batch too costly', `The batch took more than ${ms} ms to read and check; send smaller batches.`, { maxCheckMs: ms }),
  overBudget: (retryAfterSeconds: number) =>
    new ApiError(429, 'rate_limited', 'Too much work', 'This ingest key sends more data than allowed (inflated bytes or checking time per second); retry later.', {}, { 'Retry-After': String(retryAfterSeconds) }),
  foreignStream: (index: number) =>
    new ApiError(403, 'forbidden_stream', 'Stream not accessible', 'A report names a stream that is not attributed to the customer of this ingest key; nothing was stored.', { index }),
  unsupportedMediaType: () =>
    new ApiError(415, 'unsupported_media_type', 'Unsupported media type', 'Send the body as application/json, application/x-ndjson or text/plain (JSON).'),
  unsupportedEncoding: () =>
    new ApiError(415, 'unsupported_encoding', 'Unsupported content encoding', 'Send the body as is or with Content-Encoding: gzip.'),
  tooLarge: (detail: string) => new ApiError(413, 'payload_too_large', 'Payload too large', detail),
  tooManyReports: (max: number) =>
    new ApiError(413, 'too_many_reports', 'Too many reports', `At most ${max} reports in one request; split the batch.`, { maxReports: max }),
  unreadableBody: (detail: string) => new ApiError(400, 'invalid_body', 'Invalid body', detail),
  invalidJson: (detail: string) => new ApiError(400, 'invalid_json', 'Invalid JSON', detail),
  allRejected: (rejected: Rejection[]) =>
    new ApiError(400, 'invalid_reports', 'Invalid reports', `None of the ${rejected.length} reports is valid; nothing was stored. Do not retry this batch.`, {
      accepted: 0,
      rejected,
    }),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError(429, 'rate_limited', 'Too many reports', 'This ingest key sends more reports than allowed; retry later.', {}, { 'Retry-After': String(retryAfterSeconds) }),
  spoolFull: (retryAfterSeconds: number) =>
    new ApiError(503, 'overloaded', 'Collector overloaded', 'The collector cannot keep more reports right now; retry later.', {}, { 'Retry-After': String(retryAfterSeconds) }),
  spoolFailing: (err: Error, retryAfterSeconds: number) =>
    new ApiError(
      503,
      'unavailable',
      'Collector unavailable',
      `The spool cannot write (${(err as NodeJS.ErrnoException).code ?? 'an I/O error'}); the collector tries again every few seconds and takes reports as soon as it can.`,
      {},
      { 'Retry-After': String(retryAfterSeconds) },
    ),
  unavailable: (retryAfterSeconds: number) =>
    new ApiError(503, 'unavailable', 'Collector unavailable', 'The collector cannot store reports right now; retry later.', {}, { 'Retry-After': String(retryAfterSeconds) }),
};

/** The answer a batch's problem gets (collector/batch.ts says what is wrong, as data). */
export function batchProblem(p: BatchProblem): ApiError {
  switch (p.code) {
    case 'tooLarge':
      return ingestProblems.tooLarge(p.detail);
    case 'unreadableBody':
      return ingestProblems.unreadableBody(p.detail);
    case 'invalidJson':
      return ingestProblems.invalidJson(p.detail);
    case 'tooManyReports':
      return ingestProblems.tooManyReports(p.max);
    case 'foreignStream':
      return ingestProblems.foreignStream(p.index);
    case 'allRejected':
      return ingestProblems.allRejected(p.rejected);
    case 'tooDeep':
      return ingestProblems.tooDeep(p.max);
    case 'tooSlow':
      return ingestProblems.tooCostly(p.ms);
  }
}
