// The portal's loopback client keeps telemetry answers per caller, snapshot and path: a repeat at
// the same snapshot reaches no server, another snapshot or another caller does, and a refusal is
// never kept. Against a real node:http server on loopback that counts what it is asked.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRefusal, PortalApi } from '../../portal/api-client.ts';

let server: http.Server;
const asked: string[] = [];
let refuse = false;
const api = new PortalApi();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    asked.push(`${req.headers.authorization} ${req.url}`);
    res.setHeader('Content-Type', 'application/json');
    if (req.url?.startsWith('/control/')) {
      res.setHeader('ETag', '"v1"');
      if (req.headers['if-none-match'] === '"v1"') {
        res.statusCode = 304;
        res.end();
        return;
      }
    }
    if (refuse) {
      res.statusCode = 503;
      res.end(JSON.stringify({ code: 'busy', detail: 'busy' }));
      return;
    }
    res.end(JSON.stringify({ n: asked.length, url: req.url }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  api.listening(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('PortalApi.getAtSnapshot', () => {
  it('asks once per caller, snapshot and path', async () => {
    const a = await api.getAtSnapshot<{ n: number }>('/telemetry/summary?window=24h', 'token-a', 'snap-1');
    expect(await api.getAtSnapshot('/telemetry/summary?window=24h', 'token-a', 'snap-1')).toEqual(a);
    expect(asked).toHaveLength(1);
    await api.getAtSnapshot('/telemetry/summary?window=24h', 'token-b', 'snap-1');
    await api.getAtSnapshot('/telemetry/summary?window=24h', 'token-a', 'snap-2');
    await api.getAtSnapshot('/telemetry/summary?window=7d', 'token-a', 'snap-1');
    expect(asked).toEqual([
      'Bearer token-a /telemetry/summary?window=24h',
      'Bearer token-b /telemetry/summary?window=24h',
      'Bearer token-a /telemetry/summary?window=24h',
      'Bearer token-a /telemetry/summary?window=7d',
    ]);
  });

  it('keeps no refusal: the next request asks again', async () => {
    refuse = true;
    await expect(api.getAtSnapshot('/telemetry/streams', 'token-a', 'snap-3')).rejects.toBeInstanceOf(ApiRefusal);
    refuse = false;
    const before = asked.length;
    await api.getAtSnapshot('/telemetry/streams', 'token-a', 'snap-3');
    expect(asked.length).toBe(before + 1);
  });
});

describe('PortalApi.getRevalidated', () => {
  it("sends the last answer's ETag back, and a 304 gives that answer again", async () => {
    const first = await api.getRevalidated<{ n: number }>('/control/reports/pilot/a:b?format=json', 'token-a');
    const before = asked.length;
    expect(await api.getRevalidated('/control/reports/pilot/a:b?format=json', 'token-a')).toEqual(first);
    expect(asked.length).toBe(before + 1);
    // Another caller holds nothing: a whole answer.
    const other = await api.getRevalidated<{ n: number }>('/control/reports/pilot/a:b?format=json', 'token-b');
    expect(other.n).toBe(asked.length);
  });
});
