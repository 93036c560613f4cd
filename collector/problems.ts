// The collector's problems (RFC 9457, api-decisions.md "Errors"), built on the API's typed error so
// that the same request frame answers them. Retry-After says when back-pressure is worth retrying.
import { ApiError } from '../lib/http/problem.ts';
import type { BatchProblem, Rejection } from './batch.ts';

export type KeyProblem = 'missing' | 'malformed' | 'unknown' | 'revoked' | 'no_tenant';

const KEY_DETAILS: Record<KeyProblem, string> = {
  missing: 'Send an ingest key as "X-Ingest-Key: <key>" (or ?key=<key> with navigator.sendBeacon).',
  malformed: 'This is not an ingest key.',
  unknown: 'This ingest key is not known.',
  revoked: 'This ingest key has been revoked.',
  no_tenant: 'The tenant of this ingest key no longer exists.',
};

export const ingestProblems = {
  invalidKey: (reason: KeyProblem) =>
    new ApiError(401, reason === 'missing' ? 'missing_ingest_key' : 'invalid_ingest_key', 'Ingest key required', KEY_DETAILS[reason]),
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
  }
}
