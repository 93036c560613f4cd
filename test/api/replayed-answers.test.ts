// Replayed answers (api/replayed-answers.ts): a repeat of a GET with the same token, URL and snapshot is
// answered before the routers, with exactly the routed answer's status, headers and body; what can
// change for a token (expiry, revocation: abuse.test.ts) is checked on every replay; another token
// never gets a replay of someone else's answer; the frame (log line, request metrics) is the same.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi, type TestResponse } from '../helpers/api.ts';
import { issueToken, tokenSecret } from '../../api/tokens.ts';
import { rawRequest } from '../helpers/child-api.ts';
import { MAX_REPLAY_URL_CHARS } from '../../api/replayed-answers.ts';
import { capturedLog } from '../helpers/captured-log.ts';

const { log: captured, lines: logs } = capturedLog();

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi({ log: captured, env: { METRICS_PORT: '0' } });
}, 240_000);

afterAll(async () => {
  await t?.close();
});

async function counter(api: TestApi, name: string): Promise<number> {
  const text = await (await fetch(api.api.metricsUrl!)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
}
const replayHits = (api: TestApi) => counter(api, 'p2ptel_api_cache_lookups_total{cache="replays",result="hit"}');

/** The answer without what differs per request by design (its id, the time it was sent). */
function answer(r: TestResponse) {
  const headers = Object.fromEntries([...r.headers.entries()].filter(([k]) => k !== 'x-request-id' && k !== 'date'));
  return { status: r.status, headers, text: r.text };
}

const ROUTES: [string, 'acme' | 'operator'][] = [
  ['/telemetry/metrics/acme:live-main?window=24h', 'acme'],
  ['/telemetry/streams?detail=1', 'acme'],
  ['/telemetry/streams', 'operator'],
  ['/telemetry/metrics?window=7d&groupBy=customer', 'operator'],
  ['/telemetry/timeseries?streamId=acme:live-main&window=24h&bucketSeconds=3600', 'acme'],
  ['/telemetry/timeseries?streamId=acme:vod-library&window=24h&bucketSeconds=900', 'acme'], // on demand
];

describe('replayed answers', () => {
  it('answer a repeat with exactly the routed answer, before the routers', async () => {
    for (const [url, who] of ROUTES) {
      const first = await t.get(url, t.tokens[who]);
      expect(first.status, `${url}: ${first.text}`).toBe(200);
      const before = await replayHits(t);
      const again = await t.get(url, t.tokens[who]);
      expect(await replayHits(t), url).toBe(before + 1);
      expect(answer(again), url).toEqual(answer(first));
      expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
      // A conditional repeat: 304 with the same validators, no body.
      const cond = await t.get(url, t.tokens[who], { 'If-None-Match': first.headers.get('etag')! });
      expect(await replayHits(t)).toBe(before + 2);
      expect([cond.status, cond.text, cond.headers.get('etag'), cond.headers.get('last-modified')]).toEqual([304, '', first.headers.get('etag'), first.headers.get('last-modified')]);
    }
  });

  it('log the replayed request like any other, and count it under its route template', async () => {
    const url = '/telemetry/metrics/acme:live-sports?window=7d';
    await t.get(url, t.tokens.acme);
    const before = await counter(t, 'p2ptel_http_request_duration_seconds_count{method="GET",route="/telemetry/metrics/:streamId",status="200"}');
    const hits = await replayHits(t);
    const r = await t.get(url, t.tokens.acme, { 'X-Request-Id': 'replay-check-1' });
    expect(r.status).toBe(200);
    expect(await replayHits(t)).toBe(hits + 1);
    expect(await counter(t, 'p2ptel_http_request_duration_seconds_count{method="GET",route="/telemetry/metrics/:streamId",status="200"}')).toBe(before + 1);
    await expect.poll(() => logs.find((l) => l['reqId'] === 'replay-check-1')).toMatchObject({
      reqId: 'replay-check-1',
      method: 'GET',
      path: '/telemetry/metrics/acme:live-sports',
      status: 200,
      role: 'tenant',
      customerId: 'acme',
    });
  });

  it("never give one token's answer to another, nor to a request without one", async () => {
    const url = '/telemetry/metrics/acme:live-main?window=1h';
    expect((await t.get(url, t.tokens.acme)).status).toBe(200);
    expect((await t.get(url, t.tokens.acme)).status).toBe(200);
    const hits = await replayHits(t);
    const other = await t.get(url, t.tokens.globex);
    expect([other.status, (other.json as { code: string }).code]).toEqual([403, 'forbidden_stream']);
    const none = await t.get(url);
    expect([none.status, (none.json as { code: string }).code]).toEqual([401, 'missing_token']);
    // The same header sent twice: refused, as the token middleware refuses it.
    const twice = await rawRequest(`${t.url}${url}`, { headers: { Authorization: [`Bearer ${t.tokens.acme}`, `Bearer ${t.tokens.acme}`] } });
    expect([twice.status, (JSON.parse(twice.body.toString()) as { code: string }).code]).toEqual([400, 'duplicate_authorization']);
    expect(await replayHits(t)).toBe(hits);
  });

  it('never remember a URL longer than MAX_REPLAY_URL_CHARS (padded URLs cannot fill the memo)', async () => {
    const base = '/telemetry/streams?window=30d';
    const long = `${base}${'&'.repeat(MAX_REPLAY_URL_CHARS - base.length + 1)}`;
    const atLimit = `${base}${'&'.repeat(MAX_REPLAY_URL_CHARS - base.length)}`;
    expect([long.length, atLimit.length]).toEqual([MAX_REPLAY_URL_CHARS + 1, MAX_REPLAY_URL_CHARS]);
    for (const url of [long, atLimit]) expect((await t.get(url, t.tokens.acme)).status).toBe(200);
    const hits = await replayHits(t);
    const again = await t.get(long, t.tokens.acme);
    expect(again.status).toBe(200);
    expect(await replayHits(t)).toBe(hits);
    expect((await t.get(atLimit, t.tokens.acme)).status).toBe(200);
    expect(await replayHits(t)).toBe(hits + 1);
  });

  it('never remember a URL that Koa reads another way (a fragment): each repeat is routed, and logged with the routed path', async () => {
    // Sent on a socket of its own: Node's HTTP client would drop the fragment.
    const send = (reqId: string) =>
      new Promise<string>((resolve, reject) => {
        const { hostname, port } = new URL(t.url);
        const socket = net.connect(Number(port), hostname, () => {
          socket.end(`GET /telemetry/streams?window=24h#frag HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.tokens.acme}\r\nX-Request-Id: ${reqId}\r\nConnection: close\r\n\r\n`);
        });
        let text = '';
        socket.on('data', (d) => (text += d.toString()));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
    const first = await send('fragment-first');
    expect(first.startsWith('HTTP/1.1 200')).toBe(true);
    const hits = await replayHits(t);
    const again = await send('fragment-repeat');
    expect(again.startsWith('HTTP/1.1 200')).toBe(true);
    expect(again.slice(again.indexOf('\r\n\r\n'))).toBe(first.slice(first.indexOf('\r\n\r\n')));
    expect(await replayHits(t)).toBe(hits);
    await expect.poll(() => logs.find((l) => l['reqId'] === 'fragment-repeat')).toMatchObject({ path: '/telemetry/streams', status: 200 });
  });

  it('stop replaying when the token expires', async () => {
    const secret = await tokenSecret(t.wh.layout, null);
    const token = await issueToken(secret, { role: 'tenant', tenant: t.tenants['acme']! }, 2);
    const url = '/telemetry/streams?window=7d';
    expect((await t.get(url, token)).status).toBe(200);
    const hits = await replayHits(t);
    expect((await t.get(url, token)).status).toBe(200);
    expect(await replayHits(t)).toBe(hits + 1);
    await new Promise((r) => setTimeout(r, 2_100));
    const late = await t.get(url, token);
    expect([late.status, (late.json as { detail: string }).detail]).toEqual([401, 'The token has expired.']);
    expect(await replayHits(t)).toBe(hits + 1);
  });

  it('are off with API_REPLAY_ENTRIES=0, and the answers are the same', async () => {
    const off = await startTestApi({ env: { METRICS_PORT: '0', API_REPLAY_ENTRIES: '0' } });
    try {
      const before = await replayHits(off); // the metrics registry is the process's: both APIs count into it
      for (const [url, who] of ROUTES) {
        const a = await off.get(url, off.tokens[who]);
        const b = await off.get(url, off.tokens[who]);
        expect(answer(b), url).toEqual(answer(a));
      }
      expect(await replayHits(off)).toBe(before);
    } finally {
      await off.close();
    }
  });

  it('hold at most API_REPLAY_ENTRIES answers, the oldest token going first', async () => {
    const one = await startTestApi({ env: { METRICS_PORT: '0', API_REPLAY_ENTRIES: '1' } });
    try {
      const a = '/telemetry/metrics/acme:live-main?window=24h';
      const b = '/telemetry/metrics/acme:live-main?window=7d';
      const hitsAfter = async (url: string) => {
        const before = await replayHits(one);
        expect((await one.get(url, one.tokens.acme)).status).toBe(200);
        return (await replayHits(one)) - before;
      };
      expect([await hitsAfter(a), await hitsAfter(a)]).toEqual([0, 1]);
      expect([await hitsAfter(b), await hitsAfter(a), await hitsAfter(a)]).toEqual([0, 0, 1]);
      // Another token's answer takes the only place, and the first token's repeat is routed again.
      expect((await one.get(a, one.tokens.operator)).status).toBe(200);
      expect(await hitsAfter(a)).toBe(0);
    } finally {
      await one.close();
    }
  });
});
