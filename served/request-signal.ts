// The lifetime of a request's work: an AbortSignal that fires when the client goes away (the
// response closes before it finished) and, with a deadline, when the time counted from the
// request's arrival runs out. Work started for a request (DuckDB calls, queued or running) follows
// it, so that nothing keeps running or waiting for a client that left.
import type { Context } from 'koa';
import { arrivedAt } from '../lib/http/frame.ts';
import { InternalError } from '../lib/errors.ts';

export class ClientGone extends InternalError {
  override name = 'ClientGone';
  override readonly errorCode = 'client_gone';
  constructor() {
    super('the client closed the connection');
  }
}

export class DeadlinePassed extends InternalError {
  override name = 'DeadlinePassed';
  override readonly errorCode = 'deadline_passed';
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms of the request's arrival`);
  }
}

/** Aborts when the response closes before it finished: the client left, or the socket failed. */
export function clientGoneSignal(ctx: Context): AbortSignal {
  const existing = ctx.state['clientGone'] as AbortSignal | undefined;
  if (existing) return existing;
  const ac = new AbortController();
  const res = ctx.res;
  if (res.destroyed || res.socket?.destroyed) ac.abort(new ClientGone());
  else res.once('close', () => !res.writableFinished && ac.abort(new ClientGone()));
  ctx.state['clientGone'] = ac.signal;
  return ac.signal;
}

/**
 * The client-gone signal, also aborting (with DeadlinePassed) `timeoutMs` after the request's
 * arrival: the wait for a DuckDB slot counts, not only the query. `dispose` stops the timer.
 */
export function requestSignal(ctx: Context, timeoutMs: number): { signal: AbortSignal; dispose: () => void } {
  const deadline = new AbortController();
  const left = arrivedAt(ctx) + timeoutMs - Date.now();
  const timer = setTimeout(() => deadline.abort(new DeadlinePassed(timeoutMs)), Math.max(0, left));
  return { signal: AbortSignal.any([clientGoneSignal(ctx), deadline.signal]), dispose: () => clearTimeout(timer) };
}
