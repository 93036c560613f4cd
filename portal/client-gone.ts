// An AbortSignal that fires when the browser's connection closes before the answer is sent: the
// portal's reads of the API are cancelled with it, and the API then cancels its own work.
import type { Context } from 'koa';

export function clientGone(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}
