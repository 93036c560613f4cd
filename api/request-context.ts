// Request ids (X-Request-Id, taken from the client when sane, else generated) and one pino JSON
// line per request with its outcome and timing. Tokens and bodies are never logged.
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '../lib/log.ts';
import type { Caller } from './tokens.ts';

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestContext(log: Logger) {
  return async function requestContextMiddleware(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    const incoming = ctx.get('X-Request-Id');
    const reqId = SANE_ID.test(incoming) ? incoming : randomUUID();
    ctx.state['reqId'] = reqId;
    ctx.set('X-Request-Id', reqId);
    try {
      await next();
    } finally {
      const caller = ctx.state['caller'] as Caller | undefined;
      const line = {
        reqId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
        role: caller?.role,
        customerId: caller?.role === 'tenant' ? caller.customerId : undefined,
      };
      // Streams log when they end, not when their headers go out.
      if (ctx.body && typeof (ctx.body as NodeJS.ReadableStream).pipe === 'function') {
        ctx.res.once('close', () => log.info({ ...line, ms: Math.round(performance.now() - started) }, 'request'));
      } else {
        log.info(line, 'request');
      }
    }
  };
}
