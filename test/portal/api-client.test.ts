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
/** While set, /telemetry/held answers wait until it is called. */
let hold: Promise<void> | null = null;
const api = new PortalApi();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    asked.push(`${req.headers.authorization} ${req.url}`);
    res.setHeader('Content-Type', 'application/json');
    if (req.url?.startsWith('/telemetry/held') && hold) {
      const n = asked.length;
      void hold.then(() => res.end(JSON.stringify({ n, url: req.url })));
      return;
    }
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

describe('PortalApi.getAtSnapshot, concurrent and across swaps', () => {
  it('makes one request for concurrent reads of the same caller, snapshot and path, and one parsed answer', async () => {
    let release!: () => void;
    hold = new Promise<void>((r) => (release = r));
    const before = asked.length;
    const reads = Array.from({ length: 5 }, () => api.getAtSnapshot<{ n: number }>('/telemetry/held?a=1', 'token-a', 'snap-c'));
    const other = api.getAtSnapshot<{ n: number }>('/telemetry/held?a=1', 'token-b', 'snap-c');
    // Both callers' requests reached the server, and no more.
    for (let i = 0; i < 200 && asked.length < before + 2; i++) await new Promise((r) => setTimeout(r, 10));
    release();
    const answers = await Promise.all(reads);
    hold = null;
    expect(new Set(answers).size).toBe(1);
    expect((await other).n).not.toBe(answers[0]!.n);
    expect(asked.slice(before)).toEqual(['Bearer token-a /telemetry/held?a=1', 'Bearer token-b /telemetry/held?a=1']);
    expect(api.inFlight.size).toBe(0);
  });

  it('a reader gone does not cancel the read others wait for', async () => {
    let release!: () => void;
    hold = new Promise<void>((r) => (release = r));
    const gone = new AbortController();
    const first = api.getAtSnapshot('/telemetry/held?b=1', 'token-a', 'snap-c', gone.signal);
    const second = api.getAtSnapshot<{ url: string }>('/telemetry/held?b=1', 'token-a', 'snap-c', new AbortController().signal);
    gone.abort();
    await expect(first).rejects.toBeDefined();
    release();
    hold = null;
    expect((await second).url).toBe('/telemetry/held?b=1');
  });

  it("keeps the answers of the last two snapshots only, and keeps none of a snapshot already dropped", async () => {
    const fresh = new PortalApi();
    fresh.listening(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    await fresh.getAtSnapshot('/telemetry/summary?window=1h', 'token-a', 's1');
    await fresh.getAtSnapshot('/telemetry/summary?window=24h', 'token-a', 's1');
    await fresh.getAtSnapshot('/telemetry/summary?window=1h', 'token-a', 's2');
    expect(fresh.keptAnswers).toBe(3);
    await fresh.getAtSnapshot('/telemetry/summary?window=1h', 'token-a', 's3');
    expect(fresh.keptAnswers).toBe(2);
    // A page that started at s1 (dropped) asks the server each time, and keeps nothing.
    const before = asked.length;
    await fresh.getAtSnapshot('/telemetry/summary?window=1h', 'token-a', 's1');
    await fresh.getAtSnapshot('/telemetry/summary?window=1h', 'token-a', 's1');
    expect(asked.length).toBe(before + 2);
    expect(fresh.keptAnswers).toBe(2);
    // s2 and s3 are still kept.
    await fresh.getAtSnapshot('/telemetry/summary?window=1h', 'token-a', 's2');
    expect(asked.length).toBe(before + 2);
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
