// GET /telemetry/breakdown and filtered /telemetry/metrics/:streamId over real HTTP, on a random
// data set of three customers whose ids prefix each other (ac, acme) and globex: figures against
// independent SQL over the raw reports, scoping (a tenant never sees another customer's sessions,
// filters never widen a scope, the platform is the sum of the customers), the metrics route
// unchanged without filters, ETag/304, and the worst form of every query value (a 400 problem,
// never a 500).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { apiConfig } from '../helpers/api.ts';
import { expectSameRows, Independent, type IndependentFilters, type Row } from '../helpers/independent.ts';
import { breakdownData, landBreakdownFiles } from '../helpers/breakdown-data.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { issueToken, tokenSecret } from '../../api/tokens.ts';
import { addTenant } from '../../control/tenants.ts';
import { silentLogger } from '../../lib/log.ts';
import { BREAKDOWN_DIMENSIONS } from '../../warehouse/reads/breakdowns.ts';
import { WINDOW_NAMES } from '../../warehouse/figures/windows.ts';

const CUSTOMERS = ['ac', 'acme', 'globex'];
const AS_OF = new Date('2026-11-20T11:37:13Z');

let wh: TestWarehouse;
let api: RunningApi;
let ind: Independent;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  wh = await openTestWarehouse();
  await landBreakdownFiles(wh, breakdownData(23, CUSTOMERS, AS_OF, 8).files);
  await runPipeline(wh, { asOf: AS_OF });
  const secret = await tokenSecret(wh.layout, null);
  for (const customerId of CUSTOMERS) {
    const tenant = await addTenant(wh.layout, { customerId, name: customerId, cdnPricePerGb: null, savingsSharePct: 25 });
    tokens[customerId] = await issueToken(secret, { role: 'tenant', tenant }, 3600);
  }
  tokens['operator'] = await issueToken(secret, { role: 'operator' }, 3600);
  api = await startApi(apiConfig(wh.root), silentLogger);
  ind = await Independent.create(wh.db, wh.layout.rawReports, AS_OF);
}, 240_000);

afterAll(async () => {
  await api?.close();
  await wh?.close();
});

interface Answer {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
}

async function get(path: string, token: string | null, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${api.url}${path}`, { headers: { ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers } });
  const text = await res.text();
  return { status: res.status, headers: res.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const qs = (filters: IndependentFilters) =>
  Object.entries(filters)
    .flatMap(([d, f]) => [...f.keep.map((v) => `filter=${encodeURIComponent(`${d}:${v ?? ''}`)}`), ...f.drop.map((v) => `filter=${encodeURIComponent(`!${d}:${v ?? ''}`)}`)])
    .map((x) => `&${x}`)
    .join('');

const FILTERS: IndependentFilters[] = [{}, { device: { keep: ['mobile', null], drop: [] }, region: { keep: [], drop: ['us-east'] } }];

describe('GET /telemetry/breakdown', () => {
  it('equals independent SQL for every by and window, one stream, a tenant and the platform', async () => {
    for (const window of WINDOW_NAMES) {
      for (const by of BREAKDOWN_DIMENSIONS) {
        for (const filters of FILTERS) {
          const cases: [string, string, string[] | undefined][] = [
            [`streamId=acme:live-1&`, tokens['acme']!, ['acme:live-1']],
            ['', tokens['ac']!, ['ac:']],
            ['', tokens['operator']!, undefined],
          ];
          for (const [scope, token, streams] of cases) {
            const r = await get(`/telemetry/breakdown?${scope}by=${by}&window=${window}${qs(filters)}`, token);
            expect(r.status, JSON.stringify(r.json)).toBe(200);
            expect(r.json).toMatchObject({ asOf: AS_OF.toISOString(), window, by, streamId: scope ? 'acme:live-1' : null });
            const theirs = await ind.breakdown(window, { by, filters, ...(streams ? { streams } : {}) });
            expectSameRows(r.json['rows'] as Row[], theirs, `${window} ${by} ${scope || token.slice(-6)}`);
            expect((r.json['rows'] as Row[]).map((x) => x['value'])).toEqual(theirs.map((x) => x['value']));
          }
        }
      }
    }
  }, 240_000);

  it('keeps a tenant to its own sessions (ac is not acme), filters never widen it, and the platform adds up the customers', async () => {
    for (const window of ['24h', 'all'] as const) {
      const byCustomer = new Map<string, Row[]>();
      for (const c of CUSTOMERS) {
        const r = await get(`/telemetry/breakdown?by=device&window=${window}`, tokens[c]!);
        const theirs = await ind.breakdown(window, { by: 'device', streams: [`${c}:`] });
        expectSameRows(r.json['rows'] as Row[], theirs, `${c} ${window}`);
        byCustomer.set(c, r.json['rows'] as Row[]);
        // A filter on a dimension only narrows: never another customer's session.
        const narrowed = await get(`/telemetry/breakdown?by=device&window=${window}&filter=!device:&filter=!cohort:nope`, tokens[c]!);
        const total = (rows: Row[]) => rows.reduce((a, x) => a + Number(x['totalSessions']), 0);
        expect(total(narrowed.json['rows'] as Row[])).toBeLessThanOrEqual(total(theirs));
      }
      const platform = (await get(`/telemetry/breakdown?by=device&window=${window}`, tokens['operator']!)).json['rows'] as Row[];
      for (const row of platform) {
        for (const f of ['totalSessions', 'totalBytesOffloaded', 'totalBytesFallback', 'rebufferEvents']) {
          const sum = [...byCustomer.values()].flat().filter((x) => x['value'] === row['value']).reduce((a, x) => a + Number(x[f]), 0);
          expect(row[f], `${window} ${String(row['value'])} ${f}`).toBe(sum);
        }
      }
    }
    expect((await get('/telemetry/breakdown?by=device&streamId=acme:live-0', tokens['ac']!)).status).toBe(403);
    expect((await get('/telemetry/breakdown?by=device&streamId=ac:live-0', tokens['acme']!)).status).toBe(403);
    expect((await get('/telemetry/breakdown?by=device&streamId=ac:never', tokens['ac']!)).status).toBe(404);
  });

  it('answers a repeat from the cache with the same ETag, and 304 to If-None-Match', async () => {
    const url = '/telemetry/breakdown?by=region&window=7d&filter=device:tv&filter=device:mobile';
    const first = await get(url, tokens['acme']!);
    const etag = first.headers.get('etag')!;
    expect(etag).toBeTruthy();
    expect(first.headers.get('last-modified')).toBe(AS_OF.toUTCString());
    // The same filters in another order are the same answer.
    const reordered = await get('/telemetry/breakdown?by=region&window=7d&filter=device:mobile&filter=device:tv&filter=device:tv', tokens['acme']!);
    expect(reordered.headers.get('etag')).toBe(etag);
    expect(reordered.json['filters']).toEqual(['device:mobile', 'device:tv']);
    expect((await fetch(`${api.url}${url}`, { headers: { Authorization: `Bearer ${tokens['acme']}`, 'If-None-Match': etag } })).status).toBe(304);
  });
});

describe('GET /telemetry/metrics/:streamId with filters and quality figures', () => {
  it('equals independent SQL with and without filters; without, the summary fields are the snapshot summary', async () => {
    for (const window of WINDOW_NAMES) {
      for (const filters of [...FILTERS, { cohort: { keep: ['control'], drop: [] } }]) {
        const r = await get(`/telemetry/metrics/acme:live-0?window=${window}${qs(filters)}`, tokens['acme']!);
        expect(r.status).toBe(200);
        const [theirs] = await ind.breakdown(window, { by: null, filters, streams: ['acme:live-0'] });
        const expected = theirs ?? { totalSessions: 0, totalBytesOffloaded: 0, totalBytesFallback: 0, avgOffloadRatio: 0, avgPeerCount: 0, avgBufferHealth: 0, rebufferEvents: 0, rebufferRatio: 0, startupTimeP95Ms: null, p2pConnectionSuccess: null };
        const { value: _v, ...figures } = expected as Row;
        expectSameRows([r.json], [figures], `metrics ${window} ${JSON.stringify(filters)}`);
        if (Object.keys(filters).length > 0) expect(r.json['filters']).toBeInstanceOf(Array);
        else expect(r.json).not.toHaveProperty('filters');
      }
      // A filter that drops no session gives the unfiltered figures, to the last digit.
      const plain = await get(`/telemetry/metrics/acme:live-0?window=${window}`, tokens['acme']!);
      const all = await get(`/telemetry/metrics/acme:live-0?window=${window}&filter=!device:nothing-has-this`, tokens['acme']!);
      const { filters: _f, ...rest } = all.json;
      expect(rest).toEqual(plain.json);
    }
  });

  it('keeps the fields of an unfiltered answer in their order, the quality figures after them', async () => {
    const r = await get('/telemetry/metrics/acme:live-0?window=all', tokens['acme']!);
    expect(Object.keys(r.json)).toEqual([
      'streamId', 'totalSessions', 'totalBytesOffloaded', 'totalBytesFallback', 'avgOffloadRatio', 'avgPeerCount', 'avgBufferHealth', 'window', 'asOf',
      'rebufferEvents', 'rebufferRatio', 'startupTimeP95Ms', 'p2pConnectionSuccess',
    ]);
  });
});

describe('GET /telemetry/summary', () => {
  const fields = (r: Answer) => {
    const { asOf: _a, window: _w, customerId: _c, filters: _f, streams: _s, activePeers: _p, ...figures } = r.json;
    return figures;
  };
  it("equals independent SQL over a customer's streams together, and the platform's, with and without filters", async () => {
    for (const window of WINDOW_NAMES) {
      for (const filters of FILTERS) {
        const cases: [string, string, string[] | undefined, string | null][] = [
          ['', tokens['ac']!, ['ac:'], 'ac'],
          ['customerId=acme&', tokens['operator']!, ['acme:'], 'acme'],
          ['', tokens['operator']!, undefined, null],
        ];
        for (const [scope, token, streams, customerId] of cases) {
          const r = await get(`/telemetry/summary?${scope}window=${window}${qs(filters)}`, token);
          expect(r.status, JSON.stringify(r.json)).toBe(200);
          expect(r.json).toMatchObject({ asOf: AS_OF.toISOString(), window, customerId });
          const [theirs] = await ind.breakdown(window, { by: null, filters, ...(streams ? { streams } : {}) });
          const expected = theirs ?? { totalSessions: 0, totalBytesOffloaded: 0, totalBytesFallback: 0, avgOffloadRatio: 0, avgPeerCount: 0, avgBufferHealth: 0, rebufferEvents: 0, rebufferRatio: 0, startupTimeP95Ms: null, p2pConnectionSuccess: null };
          const { value: _v, ...figures } = expected as Row;
          expectSameRows([fields(r)], [figures], `summary ${window} ${scope || token.slice(-6)} ${JSON.stringify(filters)}`);
        }
      }
      // streams and activePeers: the stream summaries of the customer, added up.
      const list = (await get(`/telemetry/streams?detail=1&window=${window}`, tokens['acme']!)).json['streams'] as Row[];
      const mine = await get(`/telemetry/summary?window=${window}`, tokens['acme']!);
      expect(mine.json['streams']).toBe(list.length);
      expect(mine.json['activePeers']).toBe(list.reduce((a, x) => a + Number(x['activePeers']), 0));
    }
  }, 120_000);

  it("refuses a tenant naming another customer (403), an operator's unknown customer (404), a bad customerId (400)", async () => {
    expect((await get('/telemetry/summary?customerId=acme', tokens['ac']!)).status).toBe(403);
    expect((await get('/telemetry/summary?customerId=ac', tokens['ac']!)).status).toBe(200);
    expect((await get('/telemetry/summary?customerId=nobody', tokens['operator']!)).status).toBe(404);
    const bad = await get('/telemetry/summary?customerId=__proto__%20x', tokens['operator']!);
    expect(bad.status).toBe(400);
    expect(bad.json['code']).toBe('invalid_customer_id');
    expect((await get('/telemetry/summary?filter=colour:red', tokens['ac']!)).json['code']).toBe('invalid_filter');
  });
});

describe('the pilot report', () => {
  it('lists devices, regions and versions by the breakdowns of the whole history (one definition)', async () => {
    const r = await get('/control/reports/pilot/acme:live-0', tokens['acme']!);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const metadata = r.json['metadata'] as Record<string, { sessions: number }[]>;
    const configuration = r.json['configuration'] as Record<string, { sessions: number }[]>;
    const lists: [string, { sessions: number }[], string][] = [
      ['device', metadata['deviceMix']!, 'device'],
      ['region', metadata['regions']!, 'region'],
      ['sdkVersion', configuration['sdkVersions']!, 'version'],
      ['signalingVersion', configuration['signalingVersions']!, 'version'],
    ];
    for (const [by, list, key] of lists) {
      const rows = (await get(`/telemetry/breakdown?by=${by}&window=all&streamId=acme:live-0`, tokens['acme']!)).json['rows'] as Row[];
      const asListed = (x: Record<string, unknown>) => `${String(x[key])}=${String(x['sessions'])}`;
      expect(list.map(asListed).sort(), by).toEqual(rows.map((x) => `${String(x['value'] ?? 'unknown')}=${String(x['totalSessions'])}`).sort());
    }
  });
});

describe('bad input is a 400 problem, never a 500', () => {
  const big = 'x'.repeat(100_000);
  const many = Array.from({ length: 10_000 }, (_, i) => `filter=device:d${i}`).join('&');
  const cases: [string, string][] = [
    ['/telemetry/breakdown', 'invalid_by'],
    ['/telemetry/breakdown?by=', 'invalid_by'],
    ['/telemetry/breakdown?by=colour', 'invalid_by'],
    ['/telemetry/breakdown?by=__proto__', 'invalid_by'],
    ['/telemetry/breakdown?by=constructor', 'invalid_by'],
    ['/telemetry/breakdown?by=device&by=region', 'invalid_by'],
    ['/telemetry/breakdown?by=device&window=90d', 'invalid_window'],
    ['/telemetry/breakdown?by=device&filter=!', 'invalid_filter'],
    ['/telemetry/breakdown?by=device&filter=:', 'invalid_filter'],
    ['/telemetry/breakdown?by=device&filter=!:', 'invalid_filter'],
    ['/telemetry/breakdown?by=device&filter=', 'invalid_filter'],
    ['/telemetry/breakdown?by=device&filter=device', 'invalid_filter'],
    ['/telemetry/breakdown?by=device&filter=colour:red', 'invalid_filter'],
    ['/telemetry/breakdown?by=device&filter=__proto__:x', 'invalid_filter'],
    ['/telemetry/breakdown?by=device&filter=!constructor:x', 'invalid_filter'],
    ['/telemetry/breakdown?by=device&filter=toString:', 'invalid_filter'],
    [`/telemetry/breakdown?by=device&filter=device:${'y'.repeat(300)}`, 'invalid_filter'],
    [`/telemetry/breakdown?by=device&${Array.from({ length: 51 }, () => 'filter=device:a').join('&')}`, 'invalid_filter'],
    ['/telemetry/metrics/acme:live-0?filter=colour:red', 'invalid_filter'],
    ['/telemetry/metrics/acme:live-0?filter=!', 'invalid_filter'],
    [`/telemetry/breakdown?by=device&filter=device:${big}`, 'request_too_large'],
    [`/telemetry/breakdown?by=${big}`, 'request_too_large'],
    [`/telemetry/breakdown?by=device&${many}`, 'request_too_large'],
    [`/telemetry/metrics/acme:live-0?filter=device:${big}`, 'request_too_large'],
  ];
  for (const [url, code] of cases) {
    it(`${url.slice(0, 90)}${url.length > 90 ? '…' : ''} → 400 ${code}`, async () => {
      const res = await fetch(`${api.url}${url}`, { headers: { Authorization: `Bearer ${tokens['acme']}` } });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ status: 400, code });
      if (code === 'invalid_filter') expect(body['allowed']).toEqual(BREAKDOWN_DIMENSIONS);
      if (code === 'invalid_by' && !url.includes('&by=')) expect(body['allowed']).toEqual(BREAKDOWN_DIMENSIONS);
      expect(JSON.stringify(body).length).toBeLessThan(2000);
    });
  }

  it('a value of the null form (device:) keeps the sessions without a device', async () => {
    const r = await get('/telemetry/breakdown?by=device&window=all&filter=device:', tokens['acme']!);
    expect(r.status).toBe(200);
    const rows = r.json['rows'] as Row[];
    expect(rows.every((x) => x['value'] === null)).toBe(true);
    expect(r.json['filters']).toEqual(['device:']);
  });
});
