// Signed pilot reports on a real server: the public JWK Set, `?format=jws` against the bytes served
// for json, md and html, scoping, and the static site's statements checked by hand with node:crypto.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { startTestApi, apiConfig, AS_OF, type TestApi } from '../helpers/api.ts';
import { sha256HexByHand, thumbprintByHand, verifyByHand, type HandJwk } from '../helpers/jws-by-hand.ts';
import { silentLogger } from '../../lib/log.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { runReports } from '../../jobs/pilot-reports/run.ts';
import { readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { snapshotReportsDir } from '../../pilot/publish.ts';
import { reportKeysFile } from '../../control/report-keys.ts';

let t: TestApi;
let stream: string;
let fresh: RunningApi | null = null;

beforeAll(async () => {
  t = await startTestApi();
  stream = ((await t.get('/telemetry/streams', t.tokens.acme)).json as { streams: string[] }).streams[0]!;
}, 240_000);
afterAll(async () => {
  await fresh?.close();
  await t?.close();
});

const route = (id: string, query = '') => `/control/reports/pilot/${encodeURIComponent(id)}${query}`;

/** The exact bytes of an answer (a text decode could hide a difference). */
async function raw(url: string, pathname: string, token: string | null = t.tokens.acme, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}${pathname}`, { headers: { ...headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function jwks(url = t.url): Promise<HandJwk[]> {
  const res = await raw(url, '/.well-known/jwks.json', null);
  expect(res.status).toBe(200);
  return (JSON.parse(res.bytes.toString('utf8')) as { keys: HandJwk[] }).keys;
}

describe('GET /.well-known/jwks.json', () => {
  it('is public and cacheable, lists each key with kid, use and alg, and never a private member', async () => {
    const res = await raw(t.url, '/.well-known/jwks.json', null);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
    const body = JSON.parse(res.bytes.toString('utf8')) as { keys: Record<string, string>[] };
    expect(body.keys.length).toBeGreaterThanOrEqual(1);
    for (const key of body.keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
      expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'sig', alg: 'ES256' });
      expect(key['kid']).toBe(thumbprintByHand(key as { crv: string; kty: string; x: string; y: string }));
    }
    expect(res.bytes.toString('utf8')).not.toMatch(/"d"/);
    const again = await raw(t.url, '/.well-known/jwks.json', null, { 'If-None-Match': res.headers.get('etag')! });
    expect(again.status).toBe(304);
  });

  it('holds keys of their own (not the manifest key), stored with mode 0600', async () => {
    const manifestKey = (await t.get('/manifest/public-key')).json as { x: string };
    expect((await jwks()).map((k) => k.x)).not.toContain(manifestKey.x);
    expect((await fs.stat(reportKeysFile(t.wh.layout))).mode & 0o777).toBe(0o600);
  });
});

describe('?format=jws', () => {
  it.each([[''], ['&bucketSeconds=3600']])('signs the SHA-256 of the bytes the route serves for json, md and html (%s)', async (bucket) => {
    const served = new Map<string, Buffer>();
    for (const f of ['json', 'md', 'html']) served.set(f, (await raw(t.url, route(stream, `?format=${f}${bucket}`))).bytes);
    const res = await raw(t.url, route(stream, `?format=jws${bucket}`));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/jose');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="pilot-report-${stream.replace(':', '-')}.jws"`);
    const payload = verifyByHand(res.bytes.toString('utf8'), await jwks());
    expect(payload).not.toBeNull();
    const report = JSON.parse(served.get('json')!.toString('utf8')) as { reportVersion: number; bucketSeconds: number; conclusion: { assessment: string } };
    expect(payload).toMatchObject({
      customerId: 'acme',
      streamId: stream,
      snapshotId: (await readCurrent(t.wh.layout))!.snapshot,
      asOf: AS_OF.toISOString(),
      bucketSeconds: report.bucketSeconds,
      reportVersion: report.reportVersion,
      verdict: report.conclusion.assessment,
      sha256: { json: sha256HexByHand(served.get('json')!), md: sha256HexByHand(served.get('md')!), html: sha256HexByHand(served.get('html')!) },
    });
    expect(Date.parse(String(payload!['madeAt']))).not.toBeNaN();
  });

  it('ends the Markdown and HTML with the line that says where the statement is, inside the signed bytes', async () => {
    const md = (await raw(t.url, route(stream, '?format=md'))).bytes.toString('utf8');
    const name = stream.split(':')[1]!;
    expect(md.trimEnd().split('\n').at(-1)).toBe(
      `Signed statement: \`${name}.jws\` beside this file, or \`GET ${route(stream, '?format=jws&bucketSeconds=600')}\` from the API; verify it with \`p2ptel verify-report ${name}.md\`, or with any JWS library, the keys at \`/.well-known/jwks.json\` and \`sha256sum ${name}.md\` (docs/pilot-reports.md, "Signatures").`,
    );
    const html = (await raw(t.url, route(stream, '?format=html'))).bytes.toString('utf8');
    expect(html).toMatch(/<p class="signature">Signed statement: <code>[^<]+\.jws<\/code> beside this file[^\n]*<\/p>\n<\/footer>\n<\/body>\n<\/html>\n?$/);
  });

  it('answers 304 to its ETag, and is scoped like the other formats', async () => {
    const first = await raw(t.url, route(stream, '?format=jws'));
    expect(first.headers.get('etag')).toBeTruthy();
    expect((await raw(t.url, route(stream, '?format=jws'), t.tokens.acme, { 'If-None-Match': first.headers.get('etag')! })).status).toBe(304);
    const globex = ((await t.get('/telemetry/streams', t.tokens.globex)).json as { streams: string[] }).streams[0]!;
    const foreign = await t.get(route(globex, '?format=jws'), t.tokens.acme);
    expect(foreign.status).toBe(403);
    expect(foreign.json).toMatchObject({ code: 'forbidden_stream' });
    expect((await t.get(route(stream, '?format=jws'))).status).toBe(401);
    expect((await t.get(route(stream, '?format=jws'), t.tokens.operator)).status).toBe(200);
  });
});

describe("the nightly run's statements", () => {
  it('sit beside each report of the static site, verify by hand with the published keys, and are what the API serves', async () => {
    await runReports(t.wh, { asOf: AS_OF });
    const snapshot = (await readCurrent(t.wh.layout))!.snapshot;
    const keys = await jwks();
    let checked = 0;
    for (const customer of ['acme', 'globex']) {
      const dir = path.join(snapshotReportsDir(t.wh.layout, snapshot), customer, 'streams');
      for (const file of (await fs.readdir(dir)).filter((f) => f.endsWith('.jws'))) {
        const base = path.join(dir, file.slice(0, -'.jws'.length));
        const payload = verifyByHand(await fs.readFile(`${base}.jws`, 'utf8'), keys);
        expect(payload, file).not.toBeNull();
        expect(payload).toMatchObject({ customerId: customer, snapshotId: snapshot, streamId: `${customer}:${path.basename(base)}` });
        for (const f of ['json', 'md', 'html']) expect((payload!['sha256'] as Record<string, string>)[f], `${file} ${f}`).toBe(sha256HexByHand(await fs.readFile(`${base}.${f}`)));
        checked++;
      }
    }
    expect(checked).toBe(6);

    // A fresh server serves the file itself, and its hashes are those of the bytes it serves.
    fresh = await startApi(apiConfig(t.wh.root), silentLogger);
    const jws = await raw(fresh.url, route(stream, '?format=jws'));
    expect(jws.headers.get('x-report-source')).toBe('prerendered');
    expect(jws.bytes.toString('utf8')).toBe(await fs.readFile(path.join(snapshotReportsDir(t.wh.layout, snapshot), 'acme', 'streams', `${stream.split(':')[1]}.jws`), 'utf8'));
    const payload = verifyByHand(jws.bytes.toString('utf8'), await jwks(fresh.url))!;
    for (const f of ['json', 'md', 'html']) {
      expect((payload['sha256'] as Record<string, string>)[f]).toBe(sha256HexByHand((await raw(fresh.url, route(stream, `?format=${f}`))).bytes));
    }
  });
});
