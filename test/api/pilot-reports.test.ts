// GET /control/reports/pilot/:streamId on a real server over a real snapshot: the figures against
// plain SQL over the raw files, the three formats, the query rules and the scoping, and the
// nightly run's static site served byte for byte as the on-demand answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { startTestApi, apiConfig, AS_OF, type TestApi } from '../helpers/api.ts';
import { silentLogger } from '../../lib/log.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { runReports } from '../../jobs/pilot-reports/run.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { tenantsFile } from '../../control/tenants.ts';
import { customerReportsDir } from '../../pilot/publish.ts';
import type { PilotReport } from '../../pilot/model.ts';
import { schemaValidator } from '../pilot/fixtures.ts';

let t: TestApi;
let stream: string;
const validate = schemaValidator();

beforeAll(async () => {
  t = await startTestApi();
  const list = (await t.get('/telemetry/streams', t.tokens.acme)).json as { streams: string[] };
  stream = list.streams[0]!;
}, 240_000);
afterAll(async () => {
  await t?.close();
});

const route = (id: string, query = '') => `/control/reports/pilot/${encodeURIComponent(id)}${query}`;

async function report(query = '', token = t.tokens.acme): Promise<PilotReport> {
  const r = await t.get(route(stream, query), token);
  expect(r.status, r.text).toBe(200);
  const json = r.json as PilotReport;
  validate(json);
  return json;
}

describe('the JSON report', () => {
  it('has the figures of plain SQL over the raw files, at the snapshot asOf', async () => {
    const r = await report();
    const [ind] = await (await t.independent()).query(
      `SELECT count(DISTINCT sessionId) AS sessions, sum(bytesOffloaded) AS offloaded, sum(bytesFallback) AS fallback,
              min(ts) AS first, max(ts) AS last,
              -- a session without a viewerId in any of its reports counts as a viewer of its own
              (SELECT count(DISTINCT v) FROM (SELECT max(viewerId) AS v FROM ind_reports WHERE streamId = $stream GROUP BY sessionId)) AS known,
              (SELECT count(*) FROM (SELECT max(viewerId) AS v FROM ind_reports WHERE streamId = $stream GROUP BY sessionId) WHERE v IS NULL) AS unknown
       FROM ind_reports WHERE streamId = $stream`,
      { stream },
    );
    expect(r.streamId).toBe(stream);
    expect(r.snapshot).toEqual({ id: (await readCurrent(t.wh.layout))!.snapshot, asOf: AS_OF.toISOString() });
    expect(r.bucketSeconds).toBe(600);
    expect(r.results.sessions).toBe(ind!['sessions']);
    expect(r.results.bytesOffloaded).toBe(ind!['offloaded']);
    expect(r.results.bytesFallback).toBe(ind!['fallback']);
    expect(r.metadata.viewers.count).toBe((ind!['known'] as number) + (ind!['unknown'] as number));
    expect(r.metadata.viewers.sessionsWithoutViewerId).toBe(ind!['unknown']);
    expect(r.metadata.dateRange.from).toBe((ind!['first'] as Date).toISOString());
    expect(r.metadata.dateRange.to).toBe((ind!['last'] as Date).toISOString());
    // startTestApi's tenant has no CDN rate on file: the default is assumed, and said so.
    expect(r.cost.assumedRate).toBe(true);
    expect(r.cost.savingsSharePct).toBe(25);
    expect(r.tenant).toEqual({ id: t.tenants['acme']!.id, name: 'ACME' });
  });

  it('buckets the series at bucketSeconds, each bucket as plain SQL counts it, the empty ones as zeros', async () => {
    const r = await report('?bucketSeconds=3600');
    expect(r.bucketSeconds).toBe(3600);
    const ind = await (await t.independent()).series(3600, stream);
    const byStart = new Map(ind.map((row) => [new Date(row['start'] as number).toISOString(), row]));
    expect(r.results.series[0]!.start).toBe(new Date(ind[0]!['start'] as number).toISOString());
    expect(r.results.series.at(-1)!.start).toBe(new Date(ind.at(-1)!['start'] as number).toISOString());
    let nonEmpty = 0;
    for (const [i, b] of r.results.series.entries()) {
      if (i > 0) expect(Date.parse(b.start) - Date.parse(r.results.series[i - 1]!.start)).toBe(3_600_000);
      const row = byStart.get(b.start);
      if (!row) {
        expect(b.sessions).toBe(0);
        continue;
      }
      nonEmpty++;
      expect(b.sessions).toBe(row['sessions']);
      expect(b.bytesOffloaded).toBe(row['bytesOffloaded']);
      expect(b.bytesFallback).toBe(row['bytesFallback']);
      expect(b.rebufferEvents).toBe(row['rebufferEvents']);
    }
    expect(nonEmpty).toBe(ind.length);
    // The totals do not depend on the bucket size.
    const standard = await report();
    expect(r.results.sessions).toBe(standard.results.sessions);
    expect(r.cost).toEqual(standard.cost);
  });

  it('lets an operator read any stream', async () => {
    const r = await report('', t.tokens.operator);
    expect(r.streamId).toBe(stream);
  });
});

describe('the formats', () => {
  it('md is a Markdown download with every section and blank operator lines; markdown is the same bytes', async () => {
    const md = await t.get(route(stream, '?format=md'), t.tokens.acme);
    expect(md.status).toBe(200);
    expect(md.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(md.headers.get('content-disposition')).toBe(`attachment; filename="pilot-report-${stream.replace(':', '-')}.md"`);
    for (const heading of ['Pilot metadata', 'Configuration', 'Results', 'Routing breakdown', 'Cost impact', 'Event economics', 'Conclusion']) {
      expect(md.text).toMatch(new RegExp(`^## ${heading}$`, 'm'));
    }
    expect(md.text).toMatch(/^### Operator judgement$/m);
    const alias = await t.get(route(stream, '?format=markdown'), t.tokens.acme);
    expect(alias.text).toBe(md.text);
    expect(alias.headers.get('etag')).toBe(md.headers.get('etag'));
  });

  it('html is one self-contained page that may load nothing', async () => {
    const html = await t.get(route(stream, '?format=html'), t.tokens.acme);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'unsafe-inline'/);
    expect(html.headers.get('content-disposition')).toBeNull();
    expect(html.text.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html.text).toContain('<svg');
    expect(html.text).not.toMatch(/<script|<link|src="http/i);
  });

  it('answers 304 to a matching If-None-Match, and each format has its own ETag', async () => {
    const json = await t.get(route(stream), t.tokens.acme);
    const etag = json.headers.get('etag')!;
    expect(json.headers.get('last-modified')).toBe(new Date(AS_OF).toUTCString());
    const again = await t.get(route(stream), t.tokens.acme, { 'If-None-Match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const html = await t.get(route(stream, '?format=html'), t.tokens.acme);
    expect(html.headers.get('etag')).not.toBe(etag);
  });
});

describe('bad requests and scoping', () => {
  it.each([
    ['?format=pdf', 'invalid_format'],
    ['?format=json&format=md', 'invalid_format'],
    ['?bucketSeconds=59', 'invalid_bucket_seconds'],
    ['?bucketSeconds=21601', 'invalid_bucket_seconds'],
    ['?bucketSeconds=600.5', 'invalid_bucket_seconds'],
    ['?bucketSeconds=ten', 'invalid_bucket_seconds'],
    ['?bucketSeconds=', 'invalid_bucket_seconds'],
  ])('%s is a 400 %s', async (query, code) => {
    const r = await t.get(route(stream, query), t.tokens.acme);
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(r.json).toMatchObject({ status: 400, code });
  });

  it('accepts the bounds of bucketSeconds', async () => {
    expect((await report('?bucketSeconds=21600')).bucketSeconds).toBe(21600);
    expect((await report('?bucketSeconds=60')).results.series.length).toBeGreaterThan(1000);
  });

  it("answers 403 for another tenant's stream, whether it exists or not, and 404 for a stream of the caller that never reported", async () => {
    const globex = (await t.get('/telemetry/streams', t.tokens.globex)).json as { streams: string[] };
    const foreign = await t.get(route(globex.streams[0]!, '?format=html'), t.tokens.acme);
    expect(foreign.status).toBe(403);
    expect(foreign.json).toMatchObject({ code: 'forbidden_stream' });
    expect((await t.get(route('globex:never-reported'), t.tokens.acme)).status).toBe(403);
    const missing = await t.get(route('acme:never-reported'), t.tokens.acme);
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ code: 'stream_not_found' });
  });

  it('needs a valid token', async () => {
    expect((await t.get(route(stream))).status).toBe(401);
    expect((await t.get(route(stream), t.tokens.expired)).status).toBe(401);
    expect((await t.get(route(stream), t.tokens.forged)).status).toBe(401);
  });
});

describe('pre-rendered reports', () => {
  const FORMATS = ['json', 'md', 'html'] as const;
  let second: RunningApi | null = null;
  afterAll(async () => {
    await second?.close();
  });

  async function fetchFrom(url: string, query: string): Promise<{ source: string | null; etag: string | null; body: string }> {
    const res = await fetch(`${url}${route(stream, query)}`, { headers: { Authorization: `Bearer ${t.tokens.acme}` } });
    expect(res.status).toBe(200);
    return { source: res.headers.get('x-report-source'), etag: res.headers.get('etag'), body: await res.text() };
  }

  it('the nightly run writes a static site per customer, and the API serves its files: the same bytes as rendering on demand', async () => {
    const onDemand = new Map<string, Awaited<ReturnType<typeof fetchFrom>>>();
    for (const f of FORMATS) {
      const r = await fetchFrom(t.url, `?format=${f}`);
      expect(r.source).toBe('rendered');
      if (f === 'json') validate(JSON.parse(r.body) as PilotReport);
      onDemand.set(f, r);
    }

    const run = await runReports(t.wh, { asOf: AS_OF });
    const snapshot = (await readCurrent(t.wh.layout))!.snapshot;
    expect(run).toMatchObject({ snapshot, customers: 2, rendered: 2, unchanged: 0 });

    // A fresh server (nothing in memory) finds the files.
    second = await startApi(apiConfig(t.wh.root), silentLogger);
    for (const f of FORMATS) {
      const r = await fetchFrom(second.url, `?format=${f}`);
      expect(r.source, f).toBe('prerendered');
      expect(r.body, f).toBe(onDemand.get(f)!.body);
      expect(r.etag, f).toBe(onDemand.get(f)!.etag);
    }
    // Another bucket size has no file: rendered.
    expect((await fetchFrom(second.url, '?bucketSeconds=900')).source).toBe('rendered');

    // The folder: the three files of every stream of the customer (and its statement), an index linking them with
    // relative links only, and what it was rendered from.
    const dir = customerReportsDir(t.wh.layout, snapshot, 'acme');
    const streams = ((await t.get('/telemetry/streams', t.tokens.acme)).json as { streams: string[] }).streams;
    const files = (await fs.readdir(path.join(dir, 'streams'))).sort();
    // ... and each stream's signed statement beside them (docs/pilot-reports.md, "Signatures").
    expect(files).toEqual(streams.flatMap((s) => [...FORMATS, 'jws'].map((f) => `${s.split(':')[1]}.${f}`)).sort());
    expect(await fs.readFile(path.join(dir, 'streams', `${stream.split(':')[1]}.html`), 'utf8')).toBe(onDemand.get('html')!.body);
    const index = await fs.readFile(path.join(dir, 'index.html'), 'utf8');
    const hrefs = [...new Set([...index.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!))];
    expect(hrefs.length).toBe(streams.length * 3);
    for (const href of hrefs) {
      expect(href).not.toMatch(/^(\/|[a-z]+:)/);
      await fs.access(path.join(dir, decodeURIComponent(href)));
    }
    const published = JSON.parse(await fs.readFile(path.join(dir, 'reports.json'), 'utf8')) as { snapshot: string; bucketSeconds: number; streams: unknown[] };
    expect(published).toMatchObject({ snapshot, bucketSeconds: 600 });
    expect(published.streams).toHaveLength(streams.length);
  });

  it('renders nothing again for unchanged inputs; a change of rates makes the files stale until the next run', async () => {
    expect(await runReports(t.wh, { asOf: AS_OF })).toMatchObject({ rendered: 0, unchanged: 2 });

    const file = tenantsFile(t.wh.layout);
    const doc = JSON.parse(await fs.readFile(file, 'utf8')) as { tenants: { customerId: string; cdnPricePerGb: number | null }[] };
    doc.tenants.find((x) => x.customerId === 'acme')!.cdnPricePerGb = 0.035;
    await fs.writeFile(file, JSON.stringify(doc));

    const before = await fetchFrom(second!.url, '?format=json');
    const stale = await fetchFrom(second!.url, '?format=md');
    expect(before.source).toBe('rendered');
    expect(stale.source).toBe('rendered');
    const json = JSON.parse(before.body) as PilotReport;
    expect(json.cost).toMatchObject({ cdnPricePerGb: 0.035, assumedRate: false });

    expect(await runReports(t.wh, { asOf: AS_OF })).toMatchObject({ rendered: 1, unchanged: 1 });
    const after = await fetchFrom(second!.url, '?format=html');
    expect(after.source).toBe('prerendered');
    expect(after.body).toContain('0.035');
  });

  it('goes with its snapshot when old snapshots are pruned', async () => {
    const old = (await readCurrent(t.wh.layout))!.snapshot;
    const orphan = path.join(t.wh.layout.reports, '20000101T000000000Z-deadbeef');
    await fs.mkdir(path.join(orphan, 'acme'), { recursive: true });
    await runPipeline(t.wh, { asOf: new Date(AS_OF.getTime() + 60_000) });
    const names = await fs.readdir(t.wh.layout.reports);
    expect(names).toContain(old); // still one of the kept snapshots
    expect(names).not.toContain(path.basename(orphan));
  });
});
