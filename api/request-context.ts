// The frame of every request, in one middleware: a request id (X-Request-Id, taken from the
// client when sane, else generated), the snapshot the request reads (captured once, so a swap
// during the request changes nothing it sees), problem+json for whatever a handler throws, one
// pino JSON line with the outcome and timing, and the request metrics (lib/http-metrics.ts).
// Tokens and bodies are never logged.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Next } from 'koa';
import { requestLineWriter, type Logger, type RequestLine as LogLine, type RequestLineWriter } from '../lib/log.ts';
import { observeRequest, observeRequestOf } from '../lib/http-metrics.ts';
import type { Caller } from './tokens.ts';
import type { ServedSnapshot, SnapshotStore } from './snapshot-store.ts';
import { handleError, problems } from './errors.ts';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The snapshot this request reads (captured once, when it started), or null when none is loaded. */
export function currentSnapshot(ctx: Context): ServedSnapshot | null {
  return (ctx.state['snapshot'] as ServedSnapshot | null | undefined) ?? null;
}

/** The snapshot this request reads; 503 when none is loaded yet. */
export function snapshotOf(ctx: Context): ServedSnapshot {
  const snap = currentSnapshot(ctx);
  if (!snap) throw problems.snapshotUnavailable();
  return snap;
}

/** What the frame needs of the snapshot store: the snapshot to serve, and a word on failures. */
export type FrameSnapshots = Pick<SnapshotStore, 'current' | 'explain'>;

/** For apps that read no snapshot (the collector): no snapshot, errors as they are. */
export const NO_SNAPSHOTS: FrameSnapshots = { current: () => null, explain: (err) => err };

/**
 * The frame's start on any request, routed or replayed (api/replayed-answers.ts): its id (the
 * client's X-Request-Id when sane, else generated) and the two headers every answer carries.
 */
export function startFrame(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const reqId = typeof incoming === 'string' && SANE_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader('X-Request-Id', reqId);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  return reqId;
}

/** The request's log line: id, method, path (Koa's `ctx.request.path`), status, time taken, and who called. */
export function requestLine(reqId: string, method: string, path: string, status: number, ms: number, caller: Caller | undefined): LogLine {
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

/** The frame's end of a request answered before Koa (a replay): its metric and its line. */
export function endFrame(writeLine: RequestLineWriter, route: string, line: LogLine, ms: number): void {
  observeRequestOf(route, line.method, line.status, ms);
  writeLine(line);
}

export function requestFrame(log: Logger, store: FrameSnapshots) {
  // The request line goes out through the logger's fast writer (lib/log.ts): the same JSON pino
  // writes, at a fraction of pino's cost per line, which showed as the largest item of a request.
  const writeLine = requestLineWriter(log);
  return async function requestFrameMiddleware(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    ctx.state['arrivedAt'] = Date.now(); // deadlines of the request's work count from here
    const reqId = startFrame(ctx.req, ctx.res);
    ctx.state['reqId'] = reqId;
    ctx.state['snapshot'] = store.current();
    // Koa's own objects are read directly below (not through ctx's delegating accessors): this
    // runs on every request, and each hop showed in the hot routes' profile.
    const response = ctx.response;
    try {
      await next();
      if (response.body === undefined || response.body === null) {
        if (response.status === 404) throw problems.notFound();
        if (response.status === 405) throw problems.methodNotAllowed((response.get('Allow') || 'GET').split(/,\s*/));
      }
    } catch (err) {
      handleError(ctx, store.explain(err), log);
    }
    // Timed until the response (or a stream's headers) is handed to Node.
    const ms = performance.now() - started;
    observeRequest(ctx, ms);
    // A streamed body logs when it has been sent, not when its headers go out.
    const body = response.body;
    const line = (took: number) => requestLine(reqId, ctx.req.method!, ctx.request.path, ctx.res.statusCode, took, ctx.state['caller'] as Caller | undefined);
    if (body && typeof (body as NodeJS.ReadableStream).pipe === 'function') {
      ctx.res.once('close', () => writeLine(line(performance.now() - started)));
    } else {
      writeLine(line(ms));
    }
  };
}
