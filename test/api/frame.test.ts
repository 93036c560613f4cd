// The request frame cannot throw (issue 16, point 1): when writing a problem body fails, the client
// still gets a 500 problem+json carrying the request id, and the failure is logged with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Koa from 'koa';
import { pino } from 'pino';
import { NO_SNAPSHOTS, requestFrame } from '../../api/request-context.ts';
import { ApiError } from '../../api/errors.ts';

const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
    done();
  },
});

let server: http.Server;
let url: string;

beforeAll(async () => {
  const app = new Koa();
  app.silent = true;
  app.use(requestFrame(pino({ level: 'info' }, sink), NO_SNAPSHOTS));
  app.use((ctx) => {
    if (ctx.path === '/cyclic') {
      const loop: Record<string, unknown> = {};
      loop['self'] = loop;
      throw new ApiError(400, 'odd', 'Odd', 'A problem whose extra cannot be serialised.', { loop });
    }
    if (ctx.path === '/deep') {
      let deep: unknown = [];
      for (let i = 0; i < 100_000; i++) deep = [deep];
      throw new ApiError(400, 'deep', 'Deep', 'A problem carrying a deep value.', { deep });
    }
    ctx.body = 'ok';
  });
  server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

describe('the error frame', () => {
  it.each(['/cyclic', '/deep'])('answers %s with a 500 problem+json with the request id, and logs it', async (path) => {
    const r = await fetch(`${url}${path}`, { headers: { 'X-Request-Id': `frame-${path.slice(1)}` } });
    expect(r.status).toBe(500);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(r.headers.get('x-request-id')).toBe(`frame-${path.slice(1)}`);
    expect(await r.json()).toMatchObject({ status: 500, code: 'internal', requestId: `frame-${path.slice(1)}` });
    await new Promise((res) => setTimeout(res, 20));
    expect(lines.some((l) => l['reqId'] === `frame-${path.slice(1)}` && l['msg'] === 'could not write a problem body')).toBe(true);
    expect(lines.some((l) => l['reqId'] === `frame-${path.slice(1)}` && l['msg'] === 'request' && l['status'] === 500)).toBe(true);
  });
});
