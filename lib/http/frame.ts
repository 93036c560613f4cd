// The frame of every request of an HTTP server (the API, the collector), in one middleware: a
// request id (X-Request-Id, taken from the client when sane, else generated), problem+json for
// whatever a handler throws (lib/http/problem.ts), one pino JSON line with the outcome and timing,
// and the request metrics (lib/http/metrics.ts). Tokens and bodies are never logged. A server adds
// what only it knows through hooks (the API: the snapshot a request reads, api/request-context.ts).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Next } from 'koa';
import { requestLineWriter, type Logger, type RequestLine as LogLine, type RequestLineWriter } from '../log.ts';
import { observeRequest, observeRequestOf } from './metrics.ts';
import { ApiError, frameProblems, PROBLEM_CONTENT_TYPE, sendProblem } from './problem.ts';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Who called, as the request line names them: `ctx.state.caller`, set by whatever authenticated the request. */
export interface LoggedCaller {
  role: string;
  customerId?: string;
}

/** What a server adds to the frame. */
export interface FrameHooks {
  /** When a request starts, once its id is set: what the whole request must see alike. */
  start?(ctx: Context): void;
  /** What a thrown error means to this server, before the frame answers it: a problem, or the error as it is. */
  explain?(err: unknown, ctx: Context): unknown;
}

/**
 * The frame's start on any request, routed or answered before Koa (api/replayed-answers.ts): its
 * id (the client's X-Request-Id when sane, else generated) and the two headers every answer carries.
 */
export function startFrame(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const reqId = typeof incoming === 'string' && SANE_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', reqId);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  return reqId;
}

/** The request's log line: id, method, path (Koa's `ctx.request.path`), status, time taken, and who called. */
export function requestLine(reqId: string, method: string, path: string, status: number, ms: number, caller: LoggedCaller | undefined): LogLine {
  return {
    reqId,
    method,
    path,
    status,
    ms: Math.round(ms * 10) / 10,
    role: caller?.role,
    customerId: caller?.role === 'tenant' ? caller.customerId : undefined,
  };
}

/** The frame's end of a request answered before Koa: its metric and its line. */
export function endFrame(writeLine: RequestLineWriter, route: string, line: LogLine, ms: number): void {
  observeRequestOf(route, line.method, line.status, ms);
  writeLine(line);
}

/** When the request arrived (set by the request frame; now, for a context without one). */
export function arrivedAt(ctx: Context): number {
  const t = ctx.state['arrivedAt'];
  return typeof t === 'number' ? t : Date.now();
}

export function requestFrame(log: Logger, hooks: FrameHooks = {}) {
  const { start, explain } = hooks;
  // The request line goes out through the logger's fast writer (lib/log.ts): the same JSON pino
  // writes, at a fraction of pino's cost per line, which showed as the largest item of a request.
  const writeLine = requestLineWriter(log);
  return async function requestFrameMiddleware(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    ctx.state['arrivedAt'] = Date.now(); // deadlines of the request's work count from here
    const reqId = startFrame(ctx.req, ctx.res);
    ctx.state['reqId'] = reqId;
    start?.(ctx);
    // Koa's own objects are read directly below (not through ctx's delegating accessors): this
    // runs on every request, and each hop showed in the hot routes' profile.
    const response = ctx.response;
    try {
      await next();
      if (response.body === undefined || response.body === null) {
        if (response.status === 404) throw frameProblems.notFound();
        if (response.status === 405) throw frameProblems.methodNotAllowed((response.get('Allow') || 'GET').split(/,\s*/));
      }
    } catch (err) {
      handleError(ctx, explain ? explain(err, ctx) : err, log);
    }
    // Timed until the response (or a stream's headers) is handed to Node.
    const ms = performance.now() - started;
    observeRequest(ctx, ms);
    // A streamed body logs when it has been sent, not when its headers go out.
    const body = response.body;
    const line = (took: number) => requestLine(reqId, ctx.req.method!, ctx.request.path, ctx.res.statusCode, took, ctx.state['caller'] as LoggedCaller | undefined);
    if (body && typeof (body as NodeJS.ReadableStream).pipe === 'function') {
      ctx.res.once('close', () => writeLine(line(performance.now() - started)));
    } else {
      writeLine(line(ms));
    }
  };
}

/** Answer whatever a handler threw as a problem; unexpected errors are logged and answered 500. */
function handleError(ctx: Context, err: unknown, log: Logger): void {
  let apiError: ApiError;
  if (err instanceof ApiError) {
    apiError = err;
  } else {
    // An error of Koa or of a middleware that carries a status (http-errors); a 413 names the
    // limit of JSON bodies (api/body.ts).
    const status = (err as { status?: number }).status;
    if (status === 413) apiError = frameProblems.payloadTooLarge(64 * 1024);
    else if (status === 415) apiError = frameProblems.unsupportedMediaType();
    else if (status === 400 && (err as { expose?: boolean }).expose) apiError = frameProblems.malformedRequest();
    else {
      log.error({ err, reqId: ctx.state['reqId'] }, 'unhandled error');
      apiError = frameProblems.internal();
    }
  }
  if (ctx.headerSent || !ctx.writable) {
    // A streamed response already started: nothing can be sent but an end to it.
    log.warn({ reqId: ctx.state['reqId'], code: apiError.code }, 'error after the response started');
    ctx.res.destroy();
    return;
  }
  try {
    sendProblem(ctx, apiError);
  } catch (writeErr) {
    // The frame itself must not throw: whatever went wrong writing the problem, answer a constant one.
    log.error({ err: writeErr, reqId: ctx.state['reqId'], code: apiError.code }, 'could not write a problem body');
    sendInternal(ctx);
  }
}

/** A 500 problem made of constants only, with the request id: the answer when writing another failed. */
function sendInternal(ctx: Context): void {
  const reqId = typeof ctx.state['reqId'] === 'string' ? (ctx.state['reqId'] as string) : undefined;
  ctx.res.statusCode = 500;
  for (const name of ctx.res.getHeaderNames()) if (name !== 'x-request-id') ctx.res.removeHeader(name);
  ctx.status = 500;
  ctx.set('Cache-Control', 'no-store');
  ctx.type = PROBLEM_CONTENT_TYPE;
  ctx.body = JSON.stringify({ ...frameProblems.internal().toProblem(), ...(reqId ? { requestId: reqId } : {}) });
}
