// GET /.well-known/jwks.json (docs/api.md, "Report signatures"): the public report-signing keys,
// no token needed; read on each request (a stat), so a rotation in another process shows at once.
import { createHash } from 'node:crypto';
import type { Router } from '@koa/router';
import { notModified } from '../http-cache.ts';
import { reportJwks } from '../../control/report-keys.ts';
import type { ApiDeps } from '../deps.ts';

/**
 * Short: a verifier that cached the set before a rotation sees the new key within five minutes
 * (our own `verify-report` fetches it every time).
 */
const CACHE_CONTROL = 'public, max-age=300';

interface Serialised {
  text: string;
  body: Buffer;
  etag: string;
}

export function jwksRoutes(router: Router, deps: ApiDeps): void {
  // The set changes at a rotation and when a retired key expires: serialised and hashed only then.
  let last: Serialised | null = null;
  const serialise = (text: string): Serialised => {
    if (last?.text !== text) last = { text, body: Buffer.from(text), etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 22)}"` };
    return last;
  };

  router.get('/.well-known/jwks.json', async (ctx) => {
    const { body, etag } = serialise(JSON.stringify(await reportJwks(deps.layout, deps.config.reportKeys.retentionMs)));
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', CACHE_CONTROL);
    if (notModified(ctx, etag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/json';
    ctx.body = body;
  });
}
