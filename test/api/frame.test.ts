// The request frame cannot throw (issue 16, point 1): when writing a problem body fails, the client
// still gets a 500 problem+json carrying the request id, and the failure is logged with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { apiRequestFrame } from '../../api/request-context.ts';
import { ApiError } from '../../lib/http/problem.ts';
import { Db } from '../../warehouse/duckdb/db.ts';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { capturedLog } from '../helpers/captured-log.ts';

const { log: captured, lines } = capturedLog();

let server: http.Server;
let url: string;
let db: Db;
const spill = fs.mkdtempSync(path.join(os.tmpdir(), 'frame-oom-'));

beforeAll(async () => {
  // A real DuckDB whose memory limit a grouping of 2 M distinct keys cannot fit in, with no
  // spill room: its error is the one a route meets when concurrent work fills the API's DuckDB.
  db = await Db.open({ threads: 1, memoryLimit: '8MB', maxConcurrent: 1 }, spill);
  const app = new Koa();
  app.silent = true;
  app.use(apiRequestFrame(captured, { current: () => null, explain: (err) => err })); // no snapshot loaded
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
    if (ctx.path === '/oom') {
      return db.withSession(async (s) => {
        await s.run(`SET max_temp_directory_size = '0KB'`);
        await s.all(`SELECT k, list(v) FROM (SELECT range AS k, range AS v FROM range(2000000)) GROUP BY k ORDER BY k LIMIT 1`);
        ctx.body = 'fitted';
      });
    }
    ctx.body = 'ok';
  });
  server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  db.close();
  fs.rmSync(spill, { recursive: true, force: true });
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

  it('answers DuckDB running out of memory as 503 busy with Retry-After, logged as a warning', async () => {
    const r = await fetch(`${url}/oom`, { headers: { 'X-Request-Id': 'frame-oom' } });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await r.json()).toMatchObject({ status: 503, code: 'busy' });
    await new Promise((res) => setTimeout(res, 20));
    const warned = lines.find((l) => l['reqId'] === 'frame-oom' && l['msg'] === 'DuckDB out of memory: answered busy');
    expect(warned?.['err']).toMatch(/^Out of Memory Error/);
  });
});
