// Operator reads over real HTTP: tenants, per-customer metrics and billing. Invoices and summaries
// equal an independent computation over the raw files with the rates (its own arithmetic, not the
// cost-rules module); months split at UTC midnight; a customer without a rate uses the platform
// default and says so; every route is 403 to tenants and 401 without a token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.ts';
import { silentLogger } from '../../lib/log.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { issueToken, tokenSecret } from '../../api/tokens.ts';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { landingPath, writeReportsParquet } from '../helpers/reports.ts';
import { expectSameFigure, Independent, norm, type Row } from '../helpers/independent.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { addTenant, type Tenant } from '../../control/tenants.ts';
import { replaceOrigins } from '../../control/origins.ts';
import { timestampParam } from '../../warehouse/duckdb/param-values.ts';

const AS_OF = new Date('2026-11-20T12:00:00Z');
let wh: TestWarehouse;
let api: RunningApi;
let ind: Independent;
let op: string;
let tenantToken: string;
const tenants: Record<string, Tenant> = {};

type Json = Record<string, unknown>;
async function get(path: string, token: string | null = op): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${api.url}${path}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as Json };
}

const RATES: Record<string, { price: number; share: number; assumed: boolean }> = {
  acme: { price: 0.035, share: 20, assumed: false },
  globex: { price: 0.02, share: 25, assumed: true }, // a tenant without a CDN rate
  initech: { price: 0.02, share: 25, assumed: true }, // no tenant at all
  edge: { price: 0.05, share: 10, assumed: false },
};

/** The cost rules done by hand, in micro-dollars: avoided, fee, net. */
function expectedMicros(bytes: number, customer: string): { avoided: number; fee: number } {
  const { price, share } = RATES[customer]!;
  const avoided = Math.round((bytes / 1e9) * price * 1e6);
  return { avoided, fee: Math.round((avoided * share) / 100) };
}

/** Offloaded bytes per (customer, stream) of a period of UTC days, from the raw files. */
async function bytesByStream(from: string, to: string): Promise<Map<string, Map<string, number>>> {
  const rows = await ind.query(
    `SELECT split_part(streamId, ':', 1) AS customer, streamId, sum(bytesOffloaded) AS off, sum(bytesOffloaded + bytesFallback) AS delivered
     FROM ind_reports WHERE CAST(ts AS DATE) BETWEEN CAST($from AS DATE) AND CAST($to AS DATE) GROUP BY ALL`,
    { from, to },
  );
  const out = new Map<string, Map<string, number>>();
  for (const r of rows) {
    if (Number(norm(r['delivered'])) === 0) continue;
    const c = String(r['customer']);
    if (!out.has(c)) out.set(c, new Map());
    out.get(c)!.set(String(r['streamId']), Number(norm(r['off'])));
  }
  return out;
}

function expectedTotals(streams: Map<string, number>, customer: string) {
  let avoided = 0;
  let fee = 0;
  let bytes = 0;
  for (const b of streams.values()) {
    const e = expectedMicros(b, customer);
    avoided += e.avoided;
    fee += e.fee;
    bytes += b;
  }
  return { bytesOffloaded: bytes, avoidedCdnCost: avoided / 1e6, fee: fee / 1e6, netSavings: (avoided - fee) / 1e6 };
}

beforeAll(async () => {
  wh = await openTestWarehouse();
  // Sixty days over two month ends (September, October, November).
  await generateReports(wh.db, wh.layout, {
    customers: ['acme', 'globex', 'initech'],
    streams: 2,
    sessions: 200,
    start: new Date('2026-09-21T00:00:00Z'),
    hours: 60 * 24,
    seed: 41,
  });
  // A customer with reports on both sides of midnight at the end of October.
  const report = (id: string, ts: string, off: number) => ({ reportId: id, sessionId: `s-${id}`, streamId: 'edge:live', ts, bytesOffloaded: off, bytesFallback: 1000 });
  await writeReportsParquet(wh.db, landingPath(wh.root, 'edge', '2026-10-31', 'a.parquet'), [report('e1', '2026-10-31T23:59:59.999Z', 7_000_000_000)]);
  await writeReportsParquet(wh.db, landingPath(wh.root, 'edge', '2026-10-01', 'b.parquet'), [report('e2', '2026-10-01T00:00:00Z', 1_000_000_000), report('e3', '2026-10-01T00:00:00Z', 1_000_000_000)]);
  await writeReportsParquet(wh.db, landingPath(wh.root, 'edge', '2026-11-01', 'c.parquet'), [report('e4', '2026-11-01T00:00:00.000Z', 3_000_000_000)]);
  await runPipeline(wh, { asOf: AS_OF });
  ind = await Independent.create(wh.db, wh.layout.rawReports, AS_OF);

  tenants['acme'] = await addTenant(wh.layout, { customerId: 'acme', name: 'Acme', cdnPricePerGb: 0.035, savingsSharePct: 20 });
  tenants['globex'] = await addTenant(wh.layout, { customerId: 'globex', name: 'Globex', cdnPricePerGb: null, savingsSharePct: 25 });
  tenants['edge'] = await addTenant(wh.layout, { customerId: 'edge', name: 'Edge', cdnPricePerGb: 0.05, savingsSharePct: 10 });
  await replaceOrigins(wh.layout, tenants['acme'].id, ['https://cdn.acme.test/live', 'https://cdn.acme.test/vod']);
  const secret = await tokenSecret(wh.layout, null);
  op = await issueToken(secret, { role: 'operator' }, 3600);
  tenantToken = await issueToken(secret, { role: 'tenant', tenant: tenants['acme'] }, 3600);
  api = await startApi(loadConfig({ overrides: { WAREHOUSE_DIR: wh.root, PORT: 0 }, env: { DUCKDB_THREADS: '1' } }), silentLogger);
}, 240_000);

afterAll(async () => {
  await api?.close();
  await wh?.close();
});

describe('tenants', () => {
  it('lists every tenant with rates, origins count, streams and last report time', async () => {
    const r = await get('/control/tenants');
    expect(r.status).toBe(200);
    const list = r.body['tenants'] as Json[];
    expect(list.map((t) => t['customerId'])).toEqual(['acme', 'edge', 'globex']);
    const last = await ind.query(`SELECT split_part(streamId, ':', 1) AS c, max(ts) AS t, count(DISTINCT streamId) AS n FROM ind_reports GROUP BY 1`);
    for (const t of list) {
      const l = last.find((x) => x['c'] === t['customerId'])!;
      expect(t).toMatchObject({ id: tenants[String(t['customerId'])]!.id, lastReportAt: norm(l['t']), streams: norm(l['n']) });
    }
    expect(list[0]).toMatchObject({ name: 'Acme', cdnPricePerGb: 0.035, savingsSharePct: 20, originsCount: 2 });
    expect(list[2]).toMatchObject({ cdnPricePerGb: null, originsCount: 0 });
  });

  it('gives one tenant by id or customerId, with its streams, and 404 for an unknown one', async () => {
    const byId = await get(`/control/tenants/${tenants['acme']!.id}`);
    const byCustomer = await get('/control/tenants/acme');
    expect(byId.body).toEqual(byCustomer.body);
    expect(byId.body['streamIds']).toEqual(['acme:live-main', 'acme:vod-library']);
    const none = await get('/control/tenants/initech');
    expect(none.status).toBe(404);
    expect(none.body['code']).toBe('tenant_not_found');
  });
});

describe('platform-wide and per-customer metrics', () => {
  it('groupBy=customer gives each customer\'s figures, equal to the independent computation', async () => {
    for (const window of ['24h', '30d', 'all']) {
      const r = await get(`/telemetry/metrics?window=${window}&groupBy=customer`);
      expect(r.status).toBe(200);
      const lower = window === 'all' ? null : new Date(AS_OF.getTime() - (window === '24h' ? 86_400_000 : 30 * 86_400_000));
      const theirs = await ind.query(
        `WITH w AS (SELECT *, split_part(streamId, ':', 1) AS c FROM ind_reports WHERE $lower IS NULL OR ts > $lower),
              s AS (SELECT c, avg(m) AS avgPeerCount FROM (SELECT c, streamId, sessionId, avg(peerCount) AS m FROM w GROUP BY ALL) GROUP BY c)
         SELECT w.c AS customerId, count(DISTINCT w.streamId) AS streams,
                count(DISTINCT (w.streamId, w.sessionId)) AS totalSessions,
                sum(bytesOffloaded) AS totalBytesOffloaded, sum(bytesFallback) AS totalBytesFallback,
                coalesce(sum(bytesOffloaded) / nullif(sum(bytesOffloaded) + sum(bytesFallback), 0), 0) AS avgOffloadRatio,
                any_value(s.avgPeerCount) AS avgPeerCount
         FROM w JOIN s USING (c) GROUP BY w.c ORDER BY 1`,
        { lower: lower ? timestampParam(lower) : null },
      );
      const ours = r.body['customers'] as Row[];
      expect(ours.map((c) => c['customerId'])).toEqual(theirs.map((c) => c['customerId']));
      ours.forEach((o, i) => {
        for (const k of Object.keys(theirs[i]!)) {
          if (k === 'avgPeerCount' && theirs[i]![k] === null) continue;
          expectSameFigure(o[k], theirs[i]![k], `${window} ${String(o['customerId'])} ${k}`);
        }
      });
    }
    const plain = await get('/telemetry/metrics?window=24h');
    expect(plain.body['customers']).toBeUndefined();
    expect((await get('/telemetry/metrics?groupBy=stream')).status).toBe(400);
  });
});

describe('billing', () => {
  it('summarises the current month (UTC) per customer by default, as the raw files and the rates say', async () => {
    const r = await get('/billing/summary');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ from: '2026-11-01', to: '2026-11-20', currency: 'USD' });
    const expected = await bytesByStream('2026-11-01', '2026-11-20');
    const rows = r.body['customers'] as Json[];
    expect(rows.map((c) => c['customerId'])).toEqual(['acme', 'edge', 'globex', 'initech']);
    for (const row of rows) {
      const c = String(row['customerId']);
      expect(row).toMatchObject({ ...expectedTotals(expected.get(c) ?? new Map(), c), cdnPricePerGb: RATES[c]!.price, savingsSharePct: RATES[c]!.share, assumedRate: RATES[c]!.assumed });
    }
    expect(rows.find((x) => x['customerId'] === 'initech')).toMatchObject({ tenantId: null, name: null, assumedRate: true });
  });

  it('summarises any period, and refuses bad ones', async () => {
    const r = await get('/billing/summary?from=2026-09-15&to=2026-10-10');
    const expected = await bytesByStream('2026-09-15', '2026-10-10');
    for (const row of r.body['customers'] as Json[]) {
      const c = String(row['customerId']);
      expect(row).toMatchObject(expectedTotals(expected.get(c) ?? new Map(), c));
    }
    for (const q of ['from=2026-13-01', 'from=2026-11-10&to=2026-11-01', 'to=yesterday', 'from=2025-01-01&to=2026-11-01', 'from=2026-02-30']) {
      const bad = await get(`/billing/summary?${q}`);
      expect(bad.status, q).toBe(400);
      expect(bad.body['code']).toBe('invalid_period');
    }
  });

  it('issues one invoice per customer per closed month with usage, the fee as its amount, a line per stream', async () => {
    const r = await get('/billing/invoices');
    const invoices = r.body['invoices'] as Json[];
    expect(invoices.map((i) => i['id'])).toEqual([
      'inv_acme_2026-09',
      'inv_acme_2026-10',
      'inv_edge_2026-10',
      'inv_globex_2026-09',
      'inv_globex_2026-10',
      'inv_initech_2026-09',
      'inv_initech_2026-10',
    ]);
    for (const inv of invoices) {
      const c = String(inv['customerId']);
      const month = String(inv['month']);
      const last = month === '2026-09' ? '2026-09-30' : '2026-10-31';
      const streams = (await bytesByStream(`${month}-01`, last)).get(c)!;
      const totals = expectedTotals(streams, c);
      expect(inv).toMatchObject({ amount: totals.fee, avoidedCdnCost: totals.avoidedCdnCost, netSavings: totals.netSavings, amountDueCents: Math.round(totals.fee * 100), assumedRate: RATES[c]!.assumed, status: 'closed' });
      const detail = await get(`/billing/invoices/${String(inv['id'])}`);
      expect(detail.status).toBe(200);
      const lines = detail.body['lineItems'] as Json[];
      expect(lines.map((l) => [l['streamId'], l['bytesOffloaded']])).toEqual([...streams.entries()].sort());
      for (const l of lines) {
        const e = expectedMicros(Number(l['bytesOffloaded']), c);
        expect(l).toMatchObject({ avoidedCdnCost: e.avoided / 1e6, fee: e.fee / 1e6 });
      }
      expect(Math.round(lines.reduce((a, l) => a + Number(l['fee']) * 1e6, 0))).toBe(Math.round(Number(detail.body['amount']) * 1e6));
    }
    expect((await get('/billing/invoices?customerId=edge')).body['invoices']).toHaveLength(1);
    for (const id of ['inv_acme_2026-11', 'inv_acme_2026-08', 'inv_nobody_2026-10', 'inv_acme_2026-13', 'nonsense']) {
      const none = await get(`/billing/invoices/${id}`);
      expect(none.status, id).toBe(404);
      expect(none.body['code']).toBe('invoice_not_found');
    }
  });

  it('splits months at UTC midnight: 23:59:59.999 on the 31st is October, midnight is November', async () => {
    const oct = await get('/billing/invoices/inv_edge_2026-10');
    // e1 (7 GB at 23:59:59.999 on the 31st) and e2, e3 (1 GB each at midnight on the 1st) are October's.
    expect(oct.body['lineItems']).toEqual([expect.objectContaining({ streamId: 'edge:live', bytesOffloaded: 9_000_000_000 })]);
    expect(oct.body).toMatchObject({ offloadedGb: 9, avoidedCdnCost: 0.45, amount: 0.045, netSavings: 0.405, amountDueCents: 5 });
    const nov = await get('/billing/usage/edge?from=2026-10-31&to=2026-11-01');
    expect((nov.body['days'] as Json[]).map((d) => [d['date'], d['bytesOffloaded']])).toEqual([
      ['2026-10-31', 7_000_000_000],
      ['2026-11-01', 3_000_000_000],
    ]);
  });

  it('gives daily usage for a period, every day present', async () => {
    const r = await get('/billing/usage/acme?from=2026-10-28&to=2026-11-03');
    expect(r.status).toBe(200);
    const daily = await ind.query(
      `SELECT CAST(ts AS DATE)::VARCHAR AS d, sum(bytesOffloaded) AS off, sum(bytesFallback) AS fb FROM ind_reports
       WHERE streamId LIKE 'acme:%' AND CAST(ts AS DATE) BETWEEN DATE '2026-10-28' AND DATE '2026-11-03' GROUP BY 1 ORDER BY 1`,
    );
    const days = r.body['days'] as Json[];
    expect(days.map((d) => d['date'])).toEqual(['2026-10-28', '2026-10-29', '2026-10-30', '2026-10-31', '2026-11-01', '2026-11-02', '2026-11-03']);
    for (const d of days) {
      const t = daily.find((x) => x['d'] === d['date']);
      expect(d['bytesOffloaded']).toBe(t ? norm(t['off']) : 0);
      expect(d['bytesFallback']).toBe(t ? norm(t['fb']) : 0);
    }
    expect(r.body['totals']).toMatchObject(expectedTotals((await bytesByStream('2026-10-28', '2026-11-03')).get('acme')!, 'acme'));
    expect((await get('/billing/usage/nobody')).status).toBe(404);
  });

  it("gives a customer's rates and current month, saying when the rate is assumed", async () => {
    const acme = await get('/billing/customers/acme');
    expect(acme.body).toMatchObject({ customerId: 'acme', rates: { cdnPricePerGb: 0.035, cdnPricePerGbOnFile: 0.035, savingsSharePct: 20, assumedRate: false } });
    const globex = await get('/billing/customers/globex');
    expect(globex.body).toMatchObject({ rates: { cdnPricePerGb: 0.02, cdnPricePerGbOnFile: null, assumedRate: true } });
    expect((globex.body['currentMonth'] as Json)['from']).toBe('2026-11-01');
    expect(globex.body['currentMonth']).toMatchObject(expectedTotals((await bytesByStream('2026-11-01', '2026-11-20')).get('globex')!, 'globex'));
    expect((await get('/billing/customers/initech')).body).toMatchObject({ tenant: null, rates: { assumedRate: true } });
    expect((await get('/billing/customers/nobody')).status).toBe(404);
  });
});

describe('access', () => {
  const routes = [
    '/control/tenants',
    '/control/tenants/acme',
    '/telemetry/metrics',
    '/telemetry/metrics?groupBy=customer',
    '/billing/summary',
    '/billing/usage/acme',
    '/billing/invoices',
    '/billing/invoices/inv_acme_2026-10',
    '/billing/customers/acme',
  ];
  for (const route of routes) {
    it(`${route}: 401 without a token, 403 for a tenant (even its own customer), 200 for an operator`, async () => {
      const none = await get(route, null);
      expect(none.status).toBe(401);
      const tenant = await get(route, tenantToken);
      expect(tenant.status).toBe(403);
      expect(tenant.body['code']).toBe('operator_only');
      expect((await get(route)).status).toBe(200);
    });
  }
});
