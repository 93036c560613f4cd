// The guard of the routes that read a caller's telemetry (docs/api.md, "Routes"): the caller holds
// telemetry:read, and a route of one stream names it (in its path, or as `streamId` in its query:
// 403 stream_id_required without it) and may read it (a tenant its own streams, by prefix; an
// operator any: 403 forbidden_stream otherwise). Checked in that order, before the route parses
// the rest of its query or looks at the snapshot, so that a refusal tells nothing of the stream.
import type { RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import { assertStreamAccess, callerOf, requireCapability } from './auth.ts';
import { problems } from '../served/problems.ts';
import { parseQuery } from './query.ts';
import { StreamIdQuery } from './schemas/telemetry.ts';

/**
 * Where a route's stream id is: its path's `:streamId`, or the query's `streamId` (`what` names the
 * refused read), or optionally the query's (a route of the caller's streams, or of one of them).
 */
export type StreamIdFrom = { in: 'path' } | { in: 'query'; what: string } | { in: 'optional query' };

/** The guard of a telemetry route: of the caller's streams (no `stream`), or of one stream. */
export function readsTelemetry(stream?: StreamIdFrom): RouterMiddleware {
  return async (ctx, next) => {
    const caller = callerOf(ctx);
    requireCapability(caller, 'telemetry:read');
    if (stream) {
      const streamId =
        stream.in === 'path'
          ? String((ctx.params as Record<string, string>)['streamId'])
          : stream.in === 'query'
            ? queryStreamId(ctx, stream.what)
            : parseQuery(ctx, StreamIdQuery).streamId;
      if (streamId !== undefined) assertStreamAccess(caller, streamId);
      ctx.state['streamId'] = streamId;
    }
    await next();
  };
}

function queryStreamId(ctx: Context, what: string): string {
  const { streamId } = parseQuery(ctx, StreamIdQuery);
  if (streamId === undefined) throw problems.streamIdRequired(what);
  return streamId;
}

/** The stream the guard let the request read. */
export function guardedStream(ctx: Context): string {
  return ctx.state['streamId'] as string;
}

/** The stream the guard let the request read, if it named one (`optional query`). */
export function guardedOptionalStream(ctx: Context): string | undefined {
  return ctx.state['streamId'] as string | undefined;
}
