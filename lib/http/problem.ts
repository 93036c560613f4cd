// Problems (RFC 9457): the typed error that the HTTP servers (the API, the collector) throw, and
// how one is written as an application/problem+json body with a stable `code` (docs/api.md,
// "Errors"). No route writes its own error body; nothing internal (stack, SQL, path) ever reaches
// one. Each server keeps its own catalogue (served/problems.ts, collector/problems.ts); here are those
// the request frame itself answers with (lib/http/frame.ts). Internal errors and the CLI's exit codes
// have their own catalogue: lib/error-catalogue.ts.
import type { Context } from 'koa';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  [extra: string]: unknown;
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }

  toProblem(): Problem {
    return { type: `urn:p2ptel:problem:${this.code}`, title: this.title, status: this.status, detail: this.message, code: this.code, ...this.extra };
  }
}

/** The problems of the request frame: no route, a route without the method, an error that is not a problem. */
export const frameProblems = {
  notFound: () => new ApiError(404, 'not_found', 'Not found', 'There is no such route.'),
  methodNotAllowed: (allowed: string[]) =>
    new ApiError(405, 'method_not_allowed', 'Method not allowed', `Allowed: ${allowed.join(', ')}.`, {}, { Allow: allowed.join(', ') }),
  payloadTooLarge: (limit: number) =>
    new ApiError(413, 'payload_too_large', 'Payload too large', `The body is larger than ${limit} bytes.`),
  unsupportedMediaType: () =>
    new ApiError(415, 'unsupported_media_type', 'Unsupported media type', 'Send the body as Content-Type: application/json.'),
  malformedRequest: () => new ApiError(400, 'invalid_request', 'Invalid request', 'The request is malformed.'),
  internal: () => new ApiError(500, 'internal', 'Internal error', 'Something went wrong on our side.'),
};

export function sendProblem(ctx: Context, err: ApiError): void {
  ctx.status = err.status;
  for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
  ctx.set('Cache-Control', 'no-store');
  ctx.type = PROBLEM_CONTENT_TYPE;
  ctx.body = JSON.stringify(err.toProblem());
}
