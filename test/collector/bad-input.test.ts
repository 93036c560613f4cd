// The ingest route against a table of good and bad requests: every one a clear status and a
// problem+json body with a stable code (docs/api.md), nothing stored where nothing should be
// (the spool does not grow, and after a flush the landing area holds exactly the accepted
// reports), and every answer described by the collector's OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { gzipSync } from 'node:zlib';
import fs from 'node:fs/promises';
import http from 'node:http';
import { startTestCollector, sampleReport, type TestCollector } from '../helpers/collector.ts';
import { OpenApiChecker } from '../helpers/openapi.ts';
import { addIngestKey, revokeIngestKey } from '../../control/ingest-keys.ts';
import { listFiles } from '../../lib/fsx.ts';
import type { TestResponse } from '../helpers/api.ts';

let t: TestCollector;
let checker: OpenApiChecker;
let revokedKey: string;
const NOW = Date.now();
const at = (minutesAgo: number) => new Date(NOW - minutesAgo * 60_000);
const report = (n: number, overrides: Record<string, unknown> = {}) => sampleReport('acme:live-main', at(30), n, overrides);
const batch = (...reports: unknown[]) => JSON.stringify({ reports });
/** reportIds the collector has acknowledged, to compare with the landing area at the end. */
const acknowledged = new Set<string>();

beforeAll(async () => {
  t = await startTestCollector();
  revokedKey = (await addIngestKey(t.wh.layout, { customer: 'acme', label: 'to revoke' })).key;
  await revokeIngestKey(t.wh.layout, revokedKey);
  const doc = JSON.parse((await (await fetch(`${t.url}/openapi.json`)).text())) as Record<string, unknown>;
  checker = new OpenApiChecker(doc);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

interface Case {
  name: string;
  body: string | Buffer;
  headers?: Record<string, string>;
  key?: string | null | (() => string);
  query?: string | (() => string);
  method?: string;
  status: number;
  code?: string;
  /** Report ids this request must store (and only these). */
  stores?: string[];
  check?: (res: TestResponse) => void;
}

/** Every refused key gets the same words: a guess learns nothing of the keys that exist. */
const sameRefusal = (res: TestResponse) => expect((res.json as { detail: string }).detail).toBe('This ingest key is not valid.');
const ndjson = (...reports: unknown[]) => reports.map((r) => JSON.stringify(r)).join('\n') + '\n';
const many = (n: number) => Array.from({ length: n }, (_, i) => report(10_000 + i));

const CASES: Case[] = [
  { name: 'a valid batch {reports: [...]}', body: batch(report(1), report(2)), status: 202, stores: [report(1)['reportId'], report(2)['reportId']] as string[] },
  { name: 'a bare JSON array', body: JSON.stringify([report(3)]), status: 202, stores: [report(3)['reportId'] as string] },
  {
    name: 'NDJSON, one report per line',
    body: ndjson(report(4), report(5)),
    headers: { 'Content-Type': 'application/x-ndjson' },
    status: 202,
    stores: [report(4)['reportId'], report(5)['reportId']] as string[],
  },
  {
    name: 'sendBeacon: text/plain and the key in the query',
    body: batch(report(6)),
    headers: { 'Content-Type': 'text/plain;charset=UTF-8' },
    key: null,
    query: () => `?key=${t.keys['acme']}`,
    status: 202,
    stores: [report(6)['reportId'] as string],
  },
  { name: 'gzip', body: gzipSync(batch(report(7))), headers: { 'Content-Encoding': 'gzip' }, status: 202, stores: [report(7)['reportId'] as string] },
  {
    name: 'unknown fields are ignored, epoch-ms ts accepted',
    body: batch(report(8, { futureField: { a: 1 }, ts: at(20).getTime() })),
    status: 202,
    stores: [report(8)['reportId'] as string],
  },
  {
    name: 'partial: the valid report is stored, each invalid one listed',
    body: batch(report(9), report(10, { bytesOffloaded: -5 }), report(11, { peerCount: 'four' }), 'not an object', report(12, { reportId: undefined })),
    status: 202,
    stores: [report(9)['reportId'] as string],
    check: (res) => {
      const body = res.json as { accepted: number; rejected: { index: number; field: string | null; reason: string }[] };
      expect(body.accepted).toBe(1);
      expect(body.rejected.map((r) => [r.index, r.field])).toEqual([
        [1, 'bytesOffloaded'],
        [2, 'peerCount'],
        [3, null],
        [4, 'reportId'],
      ]);
      expect(body.rejected[0]!.reason).toMatch(/0 or more/);
      expect(body.rejected[3]!.reason).toBe('is required');
    },
  },
  {
    name: 'NDJSON with one broken line: that line is rejected',
    body: `${JSON.stringify(report(13))}\n{"reportId": \n`,
    headers: { 'Content-Type': 'application/x-ndjson' },
    status: 202,
    stores: [report(13)['reportId'] as string],
    check: (res) => expect((res.json as { rejected: unknown[] }).rejected).toEqual([{ index: 1, field: null, reason: 'this line is not valid JSON' }]),
  },
  { name: 'invalid JSON', body: '{"reports": [', status: 400, code: 'invalid_json' },
  { name: 'JSON that is not a batch', body: '{"report": {}}', status: 400, code: 'invalid_json' },
  { name: 'NDJSON where no line parses', body: 'nope\nnever\n', headers: { 'Content-Type': 'application/x-ndjson' }, status: 400, code: 'invalid_json' },
  {
    name: 'wrong types everywhere',
    body: batch(report(20, { final: 'yes' }), report(21, { ts: 'yesterday' }), report(22, { fallbackReasons: [1, 2] }), report(23, { cohort: 'beta' })),
    status: 400,
    code: 'invalid_reports',
    check: (res) => {
      const body = res.json as { accepted: number; rejected: { index: number; field: string }[] };
      expect(body.accepted).toBe(0);
      expect(body.rejected.map((r) => r.field)).toEqual(['final', 'ts', 'fallbackReasons', 'cohort']);
    },
  },
  {
    name: 'negative counters and map values',
    body: batch(report(24, { stallCount: -1 }), report(25, { bytesByPath: { http: -3 } })),
    status: 400,
    code: 'invalid_reports',
    check: (res) => expect((res.json as { rejected: { field: string }[] }).rejected.map((r) => r.field)).toEqual(['stallCount', 'bytesByPath']),
  },
  {
    name: 'a fractional integer and an out-of-range INTEGER',
    body: batch(report(26, { watchMs: 1.5 }), report(27, { peerCount: 2 ** 31 })),
    status: 400,
    code: 'invalid_reports',
  },
  {
    name: 'malformed stream ids',
    body: batch(report(28, { streamId: 'acme:bad name' }), report(29, { streamId: 'no-colon' }), report(30, { streamId: 'acme:' })),
    status: 400,
    code: 'invalid_reports',
    check: (res) => expect((res.json as { rejected: { field: string }[] }).rejected.map((r) => r.field)).toEqual(['streamId', 'streamId', 'streamId']),
  },
  {
    name: "another customer's stream among valid reports: 403, nothing stored",
    body: batch(report(31), report(32, { streamId: 'globex:live-main' })),
    status: 403,
    code: 'forbidden_stream',
  },
  { name: "another customer's malformed stream is still foreign", body: batch(report(33, { streamId: 'Globex:x y' })), status: 403, code: 'forbidden_stream' },
  { name: 'ts far in the future', body: batch(report(34, { ts: new Date(NOW + 3_600_000).toISOString() })), status: 400, code: 'invalid_reports' },
  { name: 'ts older than the late-data horizon', body: batch(report(35, { ts: new Date(NOW - 40 * 86_400_000).toISOString() })), status: 400, code: 'invalid_reports' },
  {
    name: 'a lone UTF-16 surrogate (it would read as NULL at landing)',
    body: batch(report(37, { sessionId: 'sess-\ud800' })),
    status: 400,
    code: 'invalid_reports',
    check: (res) => expect((res.json as { rejected: { field: string }[] }).rejected[0]!.field).toBe('sessionId'),
  },
  { name: 'an impossible date', body: batch(report(36, { ts: '2026-02-31T10:00:00Z' })), status: 400, code: 'invalid_reports' },
  { name: 'missing key', body: batch(report(40)), key: null, status: 401, code: 'missing_ingest_key' },
  { name: 'unknown key', body: batch(report(41)), key: `ingest_${'A'.repeat(32)}`, status: 401, code: 'invalid_ingest_key', check: sameRefusal },
  { name: 'malformed key', body: batch(report(42)), key: 'hello', status: 401, code: 'invalid_ingest_key', check: sameRefusal },
  { name: 'revoked key', body: batch(report(43)), key: () => revokedKey, status: 401, code: 'invalid_ingest_key', check: sameRefusal },
  {
    name: 'arrays nested 3 million deep (6 KB of gzip): refused before parsing',
    body: gzipSync('['.repeat(3_000_000) + ']'.repeat(3_000_000), { level: 9 }),
    headers: { 'Content-Encoding': 'gzip' },
    status: 400,
    code: 'invalid_json',
    check: (res) => expect((res.json as { maxNesting: number }).maxNesting).toBe(8),
  },
  {
    name: 'objects nested deep inside a report',
    body: `[${JSON.stringify(report(48)).slice(0, -1)},"extra":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}]`,
    status: 400,
    code: 'invalid_json',
  },
  {
    name: 'an NDJSON line nested deep',
    body: `${JSON.stringify(report(49))}\n${'['.repeat(100_000)}${']'.repeat(100_000)}\n`,
    headers: { 'Content-Type': 'application/x-ndjson' },
    status: 400,
    code: 'invalid_json',
  },
  {
    name: 'gzip bomb (100 MiB of zeros in ~100 KiB)',
    body: gzipSync(Buffer.alloc(100 * 1024 * 1024, 0x20), { level: 9 }),
    headers: { 'Content-Encoding': 'gzip' },
    status: 413,
    code: 'payload_too_large',
  },
  { name: '1 MiB + 1 byte', body: Buffer.alloc(1024 * 1024 + 1, 0x20), status: 413, code: 'payload_too_large' },
  { name: '2,001 reports (gzip, under the byte limits)', body: gzipSync(batch(...many(2001))), headers: { 'Content-Encoding': 'gzip' }, status: 413, code: 'too_many_reports' },
  {
    name: '2,001 NDJSON lines',
    body: gzipSync(ndjson(...many(2001))),
    headers: { 'Content-Encoding': 'gzip', 'Content-Type': 'application/x-ndjson' },
    status: 413,
    code: 'too_many_reports',
  },
  { name: 'wrong content type', body: batch(report(44)), headers: { 'Content-Type': 'application/xml' }, status: 415, code: 'unsupported_media_type' },
  { name: 'no content type', body: Buffer.from(batch(report(45))), headers: { 'Content-Type': '' }, status: 415, code: 'unsupported_media_type' },
  { name: 'unsupported encoding', body: batch(report(46)), headers: { 'Content-Encoding': 'br' }, status: 415, code: 'unsupported_encoding' },
  { name: 'says gzip, is not', body: batch(report(47)), headers: { 'Content-Encoding': 'gzip' }, status: 400, code: 'invalid_body' },
  {
    name: 'wrong method',
    body: '',
    method: 'GET',
    status: 405,
    code: 'method_not_allowed',
    check: (res) => expect(res.headers.get('allow')).toMatch(/POST/),
  },
];

describe('POST /v1/session-reports, good and bad input', () => {
  for (const c of CASES) {
    it(`${c.name} → ${c.status}${c.code ? ` ${c.code}` : ''}`, async () => {
      const before = t.collector.deps.spool.bytes();
      const key = typeof c.key === 'function' ? c.key() : c.key;
      const query = typeof c.query === 'function' ? c.query() : c.query;
      const res = await t.post(c.body, {
        ...(key === undefined ? {} : { key }),
        ...(c.headers ? { headers: c.headers } : {}),
        ...(query ? { query } : {}),
        ...(c.method ? { method: c.method } : {}),
      });
      expect(res.status, res.text).toBe(c.status);
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      if (c.status >= 400) {
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        const p = res.json as Record<string, unknown>;
        expect(p['code']).toBe(c.code);
        expect(p['status']).toBe(c.status);
        expect(typeof p['detail']).toBe('string');
        expect(res.text).not.toMatch(/\/tmp\/|at \w+ \(|ingest_[A-Za-z0-9_-]{32}/); // no paths, stacks or keys
        expect(t.collector.deps.spool.bytes(), 'nothing stored').toBe(before);
      } else {
        expect((res.json as { accepted: number }).accepted).toBe(c.stores!.length);
        expect(t.collector.deps.spool.bytes()).toBeGreaterThan(before);
        for (const id of c.stores!) acknowledged.add(id);
      }
      c.check?.(res);
      // A 405 answers any undocumented method: only the documented ones are checked.
      if (!c.method) checker.check('POST', '/v1/session-reports', res);
    });
  }

  it('answers the CORS preflight for any origin', async () => {
    const res = await fetch(`${t.url}/v1/session-reports`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://player.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,x-ingest-key,content-encoding' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const h of ['content-type', 'x-ingest-key', 'content-encoding']) expect(allowed).toContain(h);
    checker.exercised.add('OPTIONS /v1/session-reports');
  });

  it('health, readiness and the document are described too; the document is valid OpenAPI 3.1', async () => {
    for (const p of ['/healthz', '/readyz', '/openapi.json']) {
      const res = await fetch(`${t.url}${p}`);
      const text = await res.text();
      checker.check('GET', p, { status: res.status, headers: res.headers, text, json: JSON.parse(text) });
    }
    const doc = JSON.parse(await (await fetch(`${t.url}/openapi.json`)).text()) as Record<string, unknown>;
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(checker.missing()).toEqual([]);
    // Every operation named by its method and path (lib/operation-ids.ts), no two alike.
    const ids = Object.values(doc['paths'] as Record<string, Record<string, { operationId?: string }>>).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(ids).toContain('postV1SessionReports');
    expect(ids.every((id) => typeof id === 'string' && /^[a-z]+[A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('after a flush the landing area holds exactly the acknowledged reports, with no unknown column', async () => {
    await t.collector.flush();
    const landed = await t.landed();
    expect(new Set(landed.map((r) => r.reportId))).toEqual(acknowledged);
    expect(landed.length).toBe(acknowledged.size);
    const files = await listFiles(t.wh.layout.rawReports, '.parquet');
    const cols = await t.wh.db.withSession((s) => s.all<{ column_name: string }>(`DESCRIBE SELECT * FROM read_parquet('${files[0]}')`));
    expect(cols.map((c) => c.column_name)).not.toContain('futureField');
    // The spool segment was deleted once landed.
    const left = (await fs.readdir(t.spoolDir)).filter((n) => n.startsWith('seg-'));
    expect(left.length).toBeLessThanOrEqual(1); // the new open segment, empty
  });
});

/** A 429 with its code and a Retry-After of a second or more. */
function expectLimited(res: TestResponse, code: string): void {
  expect(res.status).toBe(429);
  expect((res.json as { code: string }).code).toBe(code);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

describe('admission', () => {
  it('a key over its rate gets 429 with Retry-After; another key is not affected', async () => {
    const c = await startTestCollector({ env: { COLLECTOR_RATE_LIMIT_REPORTS_PER_SECOND: '1', COLLECTOR_MAX_REPORTS: '50' } });
    try {
      const reports = Array.from({ length: 50 }, (_, i) => sampleReport('acme:live-main', at(5), i));
      expect((await c.post(batch(...reports))).status).toBe(202);
      expectLimited(await c.post(batch(sampleReport('acme:live-main', at(5), 99))), 'rate_limited');
      expect((await c.post(batch(sampleReport('globex:live-main', at(5), 1)), { key: c.keys['globex']! })).status).toBe(202);
    } finally {
      await c.close();
    }
  });

  it('a key over its budget of inflated bytes gets 429 with Retry-After; another key is not affected', async () => {
    const c = await startTestCollector({ env: { COLLECTOR_INFLATED_BYTES_PER_KEY_PER_SECOND: '100', COLLECTOR_MAX_INFLATED_BYTES: '20000' } });
    try {
      const body = batch(...Array.from({ length: 16 }, (_, i) => sampleReport('acme:live-main', at(5), i)));
      expect(body.length).toBeGreaterThan(10_000);
      expect((await c.post(body)).status).toBe(202);
      expect((await c.post(body)).status).toBe(202); // within the burst, then in debt
      expectLimited(await c.post(body), 'rate_limited');
      expect((await c.post(batch(sampleReport('globex:live-main', at(5), 1)), { key: c.keys['globex']! })).status).toBe(202);
    } finally {
      await c.close();
    }
  });

  it('a batch that takes longer than its time to check is refused (413), nothing stored', async () => {
    const c = await startTestCollector({ env: { COLLECTOR_MAX_CHECK_MS: '1' } });
    try {
      const res = await c.post(gzipSync(batch(...many(2000))), { headers: { 'Content-Encoding': 'gzip' } });
      expect(res.status).toBe(413);
      expect((res.json as { code: string }).code).toBe('too_costly');
      expect(c.collector.deps.spool.bytes()).toBe(0);
    } finally {
      await c.close();
    }
  });

  it('an address that presents too many refused keys gets 429 before its keys are looked at', async () => {
    const c = await startTestCollector({ env: { COLLECTOR_KEY_FAILURES_PER_SECOND: '0.5' } });
    try {
      // A missing key is not a guess: it does not count.
      for (let i = 0; i < 8; i++) expect((await c.post(batch(report(50 + i)), { key: null })).status).toBe(401);
      // A burst of ten seconds' worth (5), then 429 for every key, a good one too, for a while.
      for (let i = 0; i < 5; i++) expect((await c.post(batch(report(60 + i)), { key: `ingest_${String(i).repeat(32)}` })).status).toBe(401);
      expectLimited(await c.post(batch(report(70)), { key: `ingest_${'Z'.repeat(32)}` }), 'too_many_key_failures');
      expect((await c.post(batch(report(71)))).status).toBe(429);
    } finally {
      await c.close();
    }
  });

  it('a transfer coding other than chunked is refused (501), chunked alone is read', async () => {
    const c = await startTestCollector();
    const send = (te: string, body: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.request(`${c.url}/v1/session-reports`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Ingest-Key': c.keys['acme']!, 'Transfer-Encoding': te } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      const refused = await send('gzip, chunked', batch(report(80)));
      expect(refused.status).toBe(501);
      expect(JSON.parse(refused.text)).toMatchObject({ code: 'unsupported_transfer_encoding', status: 501 });
      const chunked = await send('chunked', batch(report(81)));
      expect(chunked.status).toBe(202);
      await c.collector.flush();
      expect((await c.landed()).map((r) => r.reportId)).toEqual([report(81)['reportId']]);
    } finally {
      await c.close();
    }
  });

  it('a spool over its size gets 503 with Retry-After, and is ready again once landed', async () => {
    const c = await startTestCollector({ env: { COLLECTOR_SPOOL_MAX_BYTES: '1000' } });
    try {
      expect((await c.post(batch(sampleReport('acme:live-main', at(5), 1), sampleReport('acme:live-main', at(5), 2)))).status).toBe(202);
      const full = await c.post(batch(sampleReport('acme:live-main', at(5), 3)));
      expect(full.status).toBe(503);
      expect((full.json as { code: string }).code).toBe('overloaded');
      expect(Number(full.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await fetch(`${c.url}/readyz`)).status).toBe(503);
      await c.collector.flush();
      expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
      expect((await c.post(batch(sampleReport('acme:live-main', at(5), 3)))).status).toBe(202);
    } finally {
      await c.close();
    }
  });
});
