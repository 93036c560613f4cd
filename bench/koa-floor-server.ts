// The API benchmark's middle line: a minimal Koa + @koa/router app (as many routes as the API,
// no auth, no logs, no snapshot) answering the same canned bytes as bench/bare-server.ts, so that
// the report shows how much of the gap to bare node:http is Koa's own cost.
// Usage: koa-floor-server.ts RESPONSES.json (prints its URL on stdout).
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { Router } from '@koa/router';

interface Canned {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const canned = JSON.parse(fs.readFileSync(process.argv[2]!, 'utf8')) as Record<string, Canned>;
const responses = new Map(Object.entries(canned).map(([path, c]) => [path, { ...c, bytes: Buffer.from(c.body, 'base64') }]));
const app = new Koa();
const router = new Router();
// Decoy routes, so that matching costs what it costs in the API.
for (let i = 0; i < 14; i++) router.get(`/decoy/${i}/:id`, (ctx) => void (ctx.body = ''));
const answer = (ctx: Koa.Context) => {
  const r = responses.get(ctx.url)!;
  for (const [k, v] of Object.entries(r.headers)) ctx.set(k, v);
  ctx.body = r.bytes;
};
router.get('/telemetry/metrics/:streamId', answer);
router.get('/telemetry/streams', answer);
app.use(router.routes());
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
