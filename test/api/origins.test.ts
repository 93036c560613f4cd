// The origins routes, the public key and manifest signing over real HTTP: validation and
// normalisation, allow/deny, optimistic concurrency, tenant isolation, 50 concurrent PUTs, a writer
// killed mid-replace, and signatures verified with nothing but the served JWK.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createPublicKey, verify as cryptoVerify, generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { compactVerify, importJWK } from 'jose';
import { startTestApi, apiConfig, type TestApi, type TestResponse } from '../helpers/api.ts';
import { startApi } from '../../api/server.ts';
import { silentLogger } from '../../lib/log.ts';
import { readOrigins } from '../../control/origins.ts';
import { fixtureArgv } from '../helpers/fixtures.ts';

const logs: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _e, done) {
    logs.push(chunk.toString());
    done();
  },
});

let t: TestApi;
let acme: string;
let globex: string;

beforeAll(async () => {
  t = await startTestApi({ log: pino({ level: 'debug' }, sink) });
  acme = t.tenants['acme']!.id;
  globex = t.tenants['globex']!.id;
}, 240_000);

afterAll(async () => {
  await t?.close();
});

const put = (id: string, body: unknown, token: string | null = t.tokens.acme, headers: Record<string, string> = {}) =>
  t.request('PUT', `/control/tenants/${id}/origins`, {
    token,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const get = (id: string, token: string | null = t.tokens.acme) => t.get(`/control/tenants/${id}/origins`, token);
const sign = (body: unknown, token: string | null = t.tokens.acme) =>
  t.request('POST', '/manifest/sign', { token, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
const json = (r: TestResponse) => r.json as Record<string, unknown>;

describe('origins routes', () => {
  it('starts empty, with the platform default applying', async () => {
    const r = await get(acme);
    expect(r.status).toBe(200);
    expect(json(r)).toMatchObject({ origins: [], tenantId: acme, customerId: 'acme', updatedAt: null, platformDefaultApplies: true, platformDefault: ['https://cdn.example.com'] });
  });

  it('stores a replaced list normalised, de-duplicated and in order, by tenant id or customerId', async () => {
    const r = await put(acme, { origins: ['https://CDN.Acme.test/Live/', 'https://cdn.acme.test:443/Live', 'http://[2001:DB8::1]:8080/hls', 'https://bücher.example'] });
    expect(r.status, r.text).toBe(200);
    const stored = ['https://cdn.acme.test/Live', 'http://[2001:db8::1]:8080/hls', 'https://xn--bcher-kva.example'];
    expect(json(r)['origins']).toEqual(stored);
    expect(json(r)['platformDefaultApplies']).toBe(false);
    expect((await get('acme')).json).toMatchObject({ origins: stored, tenantId: acme });
    expect((await get(acme, t.tokens.operator)).json).toMatchObject({ origins: stored });
  });

  it('refuses a list with any invalid entry, listing each one, and stores nothing', async () => {
    const before = (await get(acme)).json;
    const cases: [unknown, number, RegExp][] = [
      [{ origins: ['https://ok.example', 'javascript:alert(1)', 'ftp://x', 'file:///etc/passwd', 'http://', 'https://user:pw@host', 'https://host/#frag', 'https://host?q=1', 42, ['https://nested.example'], 'x'.repeat(2049)] }, 10, /problems in the list/],
      [{ origins: Array.from({ length: 501 }, (_, i) => `https://h${i}.example`) }, 1, /1 problem/],
      [{}, 1, /1 problem/],
      [{ origins: 'https://a.example' }, 1, /1 problem/],
      [[], 1, /1 problem/],
    ];
    for (const [body, count, detail] of cases) {
      const r = await put(acme, body);
      expect(r.status).toBe(400);
      expect(json(r)).toMatchObject({ code: 'invalid_origins', detail: expect.stringMatching(detail) });
      const errors = json(r)['errors'] as { index: number | null; value: unknown; reason: string }[];
      expect(errors).toHaveLength(count);
      for (const e of errors) expect(typeof e.reason).toBe('string');
    }
    const first = json(await put(acme, cases[0]![0]))['errors'] as { index: number; reason: string }[];
    expect(first.map((e) => e.index)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(first[4]!.reason).toMatch(/credentials/);
    expect(first[8]!.reason).toMatch(/not an array/);
    expect((await get(acme)).json).toEqual(before);
  });

  it('answers 400 to invalid JSON, 415 to another content type and 413 to a body over 64 KiB', async () => {
    const bad = await put(acme, '{"origins": [');
    expect(bad.status).toBe(400);
    expect(json(bad)['code']).toBe('invalid_json');
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', '']) {
      const r = await t.request('PUT', `/control/tenants/${acme}/origins`, { token: t.tokens.acme, headers: type ? { 'Content-Type': type } : {}, body: '{"origins":[]}' });
      expect(r.status, type).toBe(415);
      expect(json(r)['code']).toBe('unsupported_media_type');
    }
    const big = { origins: Array.from({ length: 40 }, (_, i) => `https://h${i}.example/${'p'.repeat(2000)}`) };
    const r = await put(acme, big);
    expect(r.status).toBe(413);
    expect(json(r)['code']).toBe('payload_too_large');
    expect(await readOrigins(t.wh.layout, acme)).toMatchObject({ origins: expect.not.arrayContaining([expect.stringContaining('pppp')]) });
  });

  it('supports ETag and If-Match: a stale write gets 412, nothing stored', async () => {
    const read = await get(acme);
    const etag = read.headers.get('etag')!;
    expect(etag).toMatch(new RegExp(`^"${acme}\\.\\d+"$`));
    expect((await t.get(`/control/tenants/${acme}/origins`, t.tokens.acme, { 'If-None-Match': etag })).status).toBe(304);
    // If-None-Match as HTTP has it: a list, weak tags, `*` (the same comparison as every route).
    for (const header of [`"other", ${etag}`, `W/${etag}`, '*']) {
      expect((await t.get(`/control/tenants/${acme}/origins`, t.tokens.acme, { 'If-None-Match': header })).status, header).toBe(304);
    }
    expect((await t.get(`/control/tenants/${acme}/origins`, t.tokens.acme, { 'If-None-Match': '"other"' })).status).toBe(200);
    const ok = await put(acme, { origins: ['https://cdn.acme.test/live'] }, t.tokens.acme, { 'If-Match': etag });
    expect(ok.status).toBe(200);
    const stale = await put(acme, { origins: ['https://stale.example'] }, t.tokens.acme, { 'If-Match': etag });
    expect(stale.status).toBe(412);
    expect(json(stale)).toMatchObject({ code: 'precondition_failed', currentETag: ok.headers.get('etag') });
    expect(json(await get(acme))['origins']).toEqual(['https://cdn.acme.test/live']);
    expect((await put(acme, { origins: ['https://cdn.acme.test/live'] }, t.tokens.acme, { 'If-Match': '*' })).status).toBe(200);
  });

  it('isolates tenants on every route: another tenant\'s id is 403 whether or not it exists', async () => {
    for (const id of [globex, 'globex', 't_01ZZZZZZZZZZZZZZZZZZZZZZZZ', 'nobody', '..%2F' + globex]) {
      expect((await get(id)).status, `GET ${id}`).toBe(403);
      expect((await put(id, { origins: ['https://evil.example'] })).status, `PUT ${id}`).toBe(403);
    }
    expect(json(await get(globex, t.tokens.globex))['origins']).toEqual([]);
    for (const r of [await get(acme, null), await put(acme, { origins: [] }, null), await get(acme, t.tokens.expired)]) {
      expect(r.status).toBe(401);
    }
    // Operators manage any tenant; an unknown one is 404 for them.
    expect((await put('globex', { origins: ['https://cdn.globex.test'] }, t.tokens.operator)).status).toBe(200);
    expect(json(await get(globex, t.tokens.globex))['origins']).toEqual(['https://cdn.globex.test']);
    expect((await get('nobody', t.tokens.operator)).status).toBe(404);
    expect(json(await get('nobody', t.tokens.operator))['code']).toBe('tenant_not_found');
    await put('globex', { origins: [] }, t.tokens.operator);
  });
});

describe('public key and signing', () => {
  it('serves exactly { kty, crv, x, y, use, alg } without a token, cacheable', async () => {
    const r = await t.get('/manifest/public-key');
    expect(r.status).toBe(200);
    expect(Object.keys(r.json as object)).toEqual(['kty', 'crv', 'x', 'y', 'use', 'alg']);
    expect(r.json).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'sig', alg: 'ES256' });
    expect(r.headers.get('cache-control')).toBe('public, max-age=3600');
    expect((await t.get('/manifest/public-key', null, { 'If-None-Match': r.headers.get('etag')! })).status).toBe(304);
    const keyFile = path.join(t.wh.layout.control, 'manifest-signing-key.pem');
    expect((await fs.stat(keyFile)).mode & 0o777).toBe(0o600);
  });

  it('signs a URL inside the allowlist: the JWS verifies with the served JWK alone, by jose and by node:crypto', async () => {
    await put(acme, { origins: ['https://cdn.acme.test/live'] });
    const r = await sign({ url: 'https://cdn.acme.test/live/event/index.m3u8?token=1', streamId: 'acme:live-main' });
    expect(r.status, r.text).toBe(200);
    const { jws } = json(r) as { jws: string };
    const jwk = (await t.get('/manifest/public-key')).json as Record<string, string>;

    const key = await importJWK(jwk, 'ES256');
    const { payload, protectedHeader } = await compactVerify(jws, key);
    expect(protectedHeader.alg).toBe('ES256');
    const claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
    expect(claims).toMatchObject({ url: 'https://cdn.acme.test/live/event/index.m3u8?token=1', customerId: 'acme', streamId: 'acme:live-main' });
    expect(claims['exp']).toBe((claims['iat'] as number) + 3600);
    expect(Math.abs((claims['iat'] as number) - Date.now() / 1000)).toBeLessThan(60);

    const [h, p, s] = jws.split('.');
    const publicKey = createPublicKey({ key: jwk, format: 'jwk' });
    const ok = cryptoVerify('sha256', Buffer.from(`${h}.${p}`), { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(s!, 'base64url'));
    expect(ok).toBe(true);
    const tampered = Buffer.from(`${h}.${Buffer.from(JSON.stringify({ ...claims, url: 'https://evil.example/x' })).toString('base64url')}`);
    expect(cryptoVerify('sha256', tampered, { key: publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(s!, 'base64url'))).toBe(false);
  });

  it('refuses URLs outside the allowlist with 403 origin_not_allowed, and malformed ones with 400', async () => {
    for (const url of [
      'https://cdn.acme.test/liveevil/a.m3u8',
      'https://cdn.acme.test.evil.net/live/a.m3u8',
      'http://cdn.acme.test/live/a.m3u8',
      'https://cdn.acme.test/vod/a.m3u8',
      'https://cdn.acme.test/live/../vod/a.m3u8',
    ]) {
      const r = await sign({ url });
      expect(r.status, url).toBe(403);
      expect(json(r)['code']).toBe('origin_not_allowed');
    }
    for (const body of [{ url: 'ftp://cdn.acme.test/live/a' }, { url: 'https://u:p@cdn.acme.test/live/a' }, { url: 42 }, {}, ['x']]) {
      const r = await sign(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(json(r)['code']).toBe('invalid_url');
    }
    expect((await sign({ url: 'https://cdn.acme.test/live/a', streamId: 'globex:live-main' })).status).toBe(403);
    expect(json(await sign({ url: 'https://cdn.acme.test/live/a' }, t.tokens.operator))['code']).toBe('tenant_only');
    expect((await sign({ url: 'https://cdn.acme.test/live/a' }, null)).status).toBe(401);
  });

  it('with an empty list, enforces the platform default list', async () => {
    expect((await put(acme, { origins: [] })).json).toMatchObject({ origins: [], platformDefaultApplies: true });
    expect((await sign({ url: 'https://cdn.acme.test/live/a.m3u8' })).status).toBe(403);
    expect((await sign({ url: 'https://cdn.example.com/any/a.m3u8' })).status).toBe(200);
  });

  it('never puts the private key in a response or a log line', async () => {
    const pem = await fs.readFile(path.join(t.wh.layout.control, 'manifest-signing-key.pem'), 'utf8');
    const d = createPublicKey(pem) && (await import('node:crypto')).createPrivateKey(pem).export({ format: 'jwk' }).d!;
    const all = logs.join('');
    expect(all).not.toContain(d);
    expect(all).not.toContain('PRIVATE KEY');
    const key = await t.get('/manifest/public-key');
    expect(key.text).not.toContain(d);
  });

  it('keeps its key across restarts, and takes one from MANIFEST_SIGNING_KEY as PEM or JWK', async () => {
    const served = (await t.get('/manifest/public-key')).json;
    const again = await startApi(apiConfig(t.wh.root), silentLogger);
    try {
      expect(await (await fetch(`${again.url}/manifest/public-key`)).json()).toEqual(served);
    } finally {
      await again.close();
    }
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const expected = privateKey.export({ format: 'jwk' });
    for (const value of [privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, JSON.stringify(expected)]) {
      const api = await startApi(apiConfig(t.wh.root, { MANIFEST_SIGNING_KEY: value }), silentLogger);
      try {
        expect(await (await fetch(`${api.url}/manifest/public-key`)).json()).toEqual({ kty: 'EC', crv: 'P-256', x: expected.x, y: expected.y, use: 'sig', alg: 'ES256' });
      } finally {
        await api.close();
      }
    }
    await expect(startApi(apiConfig(t.wh.root, { MANIFEST_SIGNING_KEY: 'not a key' }), silentLogger)).rejects.toThrow(/MANIFEST_SIGNING_KEY is not a private key/);
  });
});

describe('durability and concurrency', () => {
  it('50 parallel PUTs of different lists end with one of them stored whole', async () => {
    const lists = Array.from({ length: 50 }, (_, i) => Array.from({ length: 20 }, (_, j) => `https://p${i}-${j}.example/x`));
    const before = await readOrigins(t.wh.layout, acme);
    const results = await Promise.all(lists.map((origins) => put(acme, { origins })));
    expect(results.map((r) => r.status)).toEqual(lists.map(() => 200));
    const stored = await readOrigins(t.wh.layout, acme);
    expect(lists).toContainEqual(stored.origins);
    expect(stored.version).toBe(before.version + 50);
    expect((await get(acme)).json).toMatchObject({ origins: stored.origins });
  });

  it('a writer killed while replacing the list leaves the old list or the new one, readable', async () => {
    const { LIST_A, LIST_B } = { LIST_A: Array.from({ length: 400 }, (_, i) => `https://a${i}.example/live`), LIST_B: Array.from({ length: 300 }, (_, i) => `https://b${i}.example/vod`) };
    for (let round = 0; round < 6; round++) {
      const child = spawn(process.execPath, fixtureArgv('replace-origins-loop.ts', t.wh.root, globex), { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => d.toString().includes('READY') && resolve()));
      await new Promise((r) => setTimeout(r, 150 + round * 97));
      const exited = new Promise((r) => child.on('exit', r));
      child.kill('SIGKILL');
      await exited;
      const stored = await readOrigins(t.wh.layout, globex);
      expect([LIST_A, LIST_B]).toContainEqual(stored.origins);
      expect((await get(globex, t.tokens.globex)).status).toBe(200);
    }
  });
});
