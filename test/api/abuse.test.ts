// What one tenant must not be able to do (issue 16): break parsing with Object's property names
// or deep JSON, confuse auth with two Authorization headers, starve others with on-demand series,
// keep using a revoked token or a removed tenant, or have odd URLs signed. A real server on
// loopback; tests check HTTP statuses and stable codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { startTestApi, apiConfig, type TestApi } from '../helpers/api.ts';
import { rawRequest } from '../helpers/child-api.ts';
import { cli } from '../helpers/cli.ts';
import { OnDemandSeries } from '../../api/ondemand-series.ts';
import { startApi } from '../../api/server.ts';
import { silentLogger } from '../../lib/log.ts';
import { issueToken, tokenSecret } from '../../api/tokens.ts';
import { addTenant } from '../../control/tenants.ts';
import { capturedLog } from '../helpers/captured-log.ts';

const { log: captured, lines } = capturedLog();

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi({ log: captured, env: { REVOCATION_POLL_SECONDS: '0.5' } });
}, 240_000);

afterAll(async () => {
  await t?.close();
});

const PROTO_NAMES = ['constructor', '__proto__', 'toString', 'valueOf', 'hasOwnProperty'];

describe('parsing', () => {
  it("refuses Object's property names as enumerated values, 400 with the parameter's code", async () => {
    for (const name of PROTO_NAMES) {
      const exp = await t.get(`/telemetry/export?streamId=acme:live-main&format=${name}`, t.tokens.acme);
      expect([name, exp.status, (exp.json as { code?: string }).code]).toEqual([name, 400, 'invalid_format']);
      const report = await t.get(`/control/reports/pilot/acme:live-main?format=${name}`, t.tokens.acme);
      expect([name, report.status, (report.json as { code?: string }).code]).toEqual([name, 400, 'invalid_format']);
      const group = await t.get(`/telemetry/metrics?groupBy=${name}`, t.tokens.operator);
      expect([name, group.status, (group.json as { code?: string }).code]).toEqual([name, 400, 'invalid_group_by']);
      const win = await t.get(`/telemetry/metrics/acme:live-main?window=${name}`, t.tokens.acme);
      expect([name, win.status, (win.json as { code?: string }).code]).toEqual([name, 400, 'invalid_window']);
    }
    // The real aliases still work.
    expect((await t.get('/control/reports/pilot/acme:live-main?format=markdown', t.tokens.acme)).status).toBe(200);
  });

  it('refuses JSON nested deeper than 32 levels before parsing it, and never echoes a nested value', async () => {
    const path = `/control/tenants/${t.tenants['acme']!.id}/origins`;
    const put = (body: string) =>
      t.request('PUT', path, { token: t.tokens.acme, headers: { 'Content-Type': 'application/json' }, body });
    const deep = `{"origins":${'['.repeat(30_000)}${']'.repeat(30_000)}}`;
    const r = await put(deep);
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(r.json).toMatchObject({ code: 'json_too_deep', status: 400 });
    expect(r.headers.get('x-request-id')).toBeTruthy();
    // Brackets inside strings do not count; 31 levels inside the object are within the bound.
    const strings = await put(JSON.stringify({ origins: ['[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['] }));
    expect((strings.json as { code: string }).code).toBe('invalid_origins');
    const nested = await put(`{"origins":[${'['.repeat(30)}${']'.repeat(30)}]}`);
    expect(nested.status).toBe(400);
    expect(nested.json).toMatchObject({ code: 'invalid_origins', errors: [{ index: 0, value: '(an array of 1)' }] });
    expect(nested.text.length).toBeLessThan(1000);
  });

  it('answers two Authorization headers with 400', async () => {
    const r = await rawRequest(`${t.url}/telemetry/streams`, {
      headers: { Authorization: [`Bearer ${t.tokens.acme}`, `Bearer ${t.tokens.globex}`] },
    });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body.toString())).toMatchObject({ code: 'duplicate_authorization' });
  });
});

describe('on-demand series', () => {
  const series = (bucketSeconds: number, customer = 'acme') => `/telemetry/timeseries?streamId=${customer}:live-main&bucketSeconds=${bucketSeconds}&window=7d`;

  /** A request given up by its client after `ms`. */
  async function abandoned(path: string, token: string, ms: number): Promise<number | 'aborted'> {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), ms);
    try {
      const r = await fetch(`${t.url}${path}`, { headers: { Authorization: `Bearer ${token}` }, signal: ac.signal });
      await r.arrayBuffer();
      return r.status;
    } catch {
      return 'aborted';
    } finally {
      clearTimeout(timer);
    }
  }

  it("admits a tenant's on-demand series up to its limit (429 with Retry-After beyond)", async () => {
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => t.get(series(601 + i), t.tokens.acme)));
    const refused = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(2);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.json).toMatchObject({ code: 'too_many_requests' });
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    }
  });

  it('30 series abandoned by one tenant are cancelled and cost another tenant at most 2 s', async () => {
    const deps = t.api.deps;
    const original = deps.onDemand;
    // Another tenant's on-demand series with nothing else running (a size of its own), as below.
    const aloneStarted = performance.now();
    expect((await t.get(series(96, 'globex'), t.tokens.globex)).status).toBe(200);
    const aloneMs = performance.now() - aloneStarted;
    // Admit them all, so that they queue for DuckDB's slots: the point is what cancellation frees.
    const generous = new OnDemandSeries(deps.db, deps.layout, deps.config.api.queryTimeoutMs, { max: 100, perTenant: 100 });
    deps.onDemand = generous;
    try {
      const gone = Array.from({ length: 30 }, (_, i) => abandoned(series(61 + i), t.tokens.acme, 300));
      await new Promise((r) => setTimeout(r, 350));
      const started = performance.now();
      const other = await t.get(series(97, 'globex'), t.tokens.globex);
      const ms = performance.now() - started;
      expect(other.status).toBe(200);
      expect(ms, `alone ${aloneMs.toFixed(0)} ms`).toBeLessThan(aloneMs + 2000);
      // They were given up while computing or waiting, not answered first.
      expect((await Promise.all(gone)).filter((x) => x === 'aborted').length).toBeGreaterThanOrEqual(20);
      // Nothing of theirs keeps running or waiting.
      await expect.poll(() => generous.inProgress, { timeout: 2000 }).toBe(0);
      expect(deps.db.stats.default.queued).toBe(0);
    } finally {
      deps.onDemand = original;
    }
  });

  it('pilot reports abandoned by their client are cancelled (their DuckDB work freed) and cost another tenant at most 2 s', async () => {
    const deps = t.api.deps;
    // What another tenant's on-demand series takes on this machine with nothing else running (a
    // size of its own: nothing cached). The 12 reports would hold it for many times that if they
    // ran to the end; cancelled, they may delay it by at most 2 s.
    const aloneStarted = performance.now();
    expect((await t.get(series(97 + 59, 'globex'), t.tokens.globex)).status).toBe(200);
    const aloneMs = performance.now() - aloneStarted;
    // Bucket sizes other than the default: no pre-rendered file, each one composed on demand.
    const report = (bucketSeconds: number) => `/control/reports/pilot/acme:live-main?bucketSeconds=${bucketSeconds}`;
    const gone = Array.from({ length: 12 }, (_, i) => abandoned(report(660 + 60 * i), t.tokens.acme, 300));
    await new Promise((r) => setTimeout(r, 350));
    const started = performance.now();
    const other = await t.get(series(97 + 60, 'globex'), t.tokens.globex);
    const ms = performance.now() - started;
    expect(other.status).toBe(200);
    expect(ms, `alone ${aloneMs.toFixed(0)} ms`).toBeLessThan(aloneMs + 2000);
    // Most are still being composed when their client leaves; on a quiet machine the first few may
    // finish inside 300 ms, whole (200) — never an error.
    const outcomes = await Promise.all(gone);
    expect(outcomes.filter((x) => x !== 'aborted' && x !== 200), `outcomes ${outcomes.join(',')}`).toEqual([]);
    expect(outcomes.filter((x) => x === 'aborted').length, `outcomes ${outcomes.join(',')}`).toBeGreaterThanOrEqual(6);
    // Nothing of theirs keeps running or waiting: interrupted, not left to finish.
    await expect.poll(() => deps.pilotReports.inProgress, { timeout: 2000 }).toBe(0);
    // An interrupted statement gives its slot back when DuckDB has stopped it, a moment after.
    await expect.poll(() => deps.db.stats.default, { timeout: 2000 }).toEqual({ running: 0, queued: 0 });
    // And a report asked for again is composed afresh, whole.
    const again = await t.get(report(660), t.tokens.acme);
    expect(again.status).toBe(200);
  });

  it('counts the timeout from arrival, waiting for a slot included, and leaves the queue when it passes', async () => {
    const deps = t.api.deps;
    const original = deps.onDemand;
    deps.onDemand = new OnDemandSeries(deps.db, deps.layout, 400, { max: 10, perTenant: 10 });
    // Occupy every shared slot with a long statement.
    const hold = new AbortController();
    const holders = Array.from({ length: deps.config.duckdb.maxConcurrent }, () =>
      deps.db.withSession((s) => s.run('SELECT count(*) FROM range(100000000000)'), { signal: hold.signal }).catch(() => 'interrupted'),
    );
    try {
      await new Promise((r) => setTimeout(r, 100));
      const started = performance.now();
      const r = await t.get(series(1234), t.tokens.acme);
      const ms = performance.now() - started;
      expect(r.status).toBe(503);
      expect(r.json).toMatchObject({ code: 'timeout' });
      expect(r.headers.get('retry-after')).toBeTruthy();
      expect(ms).toBeLessThan(3000);
      expect(deps.db.stats.default.queued).toBe(0);
    } finally {
      hold.abort(new Error('test done'));
      expect(await Promise.all(holders)).toEqual(holders.map(() => 'interrupted'));
      deps.onDemand = original;
    }
  });

  it('answers 503 busy beyond the global bound', async () => {
    const deps = t.api.deps;
    const original = deps.onDemand;
    deps.onDemand = new OnDemandSeries(deps.db, deps.layout, deps.config.api.queryTimeoutMs, { max: 1, perTenant: 5 });
    try {
      const [a, b] = await Promise.all([t.get(series(2001), t.tokens.acme), t.get(series(2002, 'globex'), t.tokens.globex)]);
      const statuses = [a.status, b.status].sort();
      expect(statuses).toEqual([200, 503]);
      const busy = [a, b].find((r) => r.status === 503)!;
      expect(busy.json).toMatchObject({ code: 'busy' });
      expect(busy.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      deps.onDemand = original;
    }
  });
});

describe('signing', () => {
  it('refuses encoded slashes, backslashes, white space and control characters, and signs the normalised URL', async () => {
    const sign = (url: string) => t.request('POST', '/manifest/sign', { token: t.tokens.acme, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ url }) });
    for (const bad of [
      'https://cdn.example.com/a/..%2F..%2Fother/master.m3u8',
      'https://cdn.example.com/a/..%2f/x.m3u8',
      'https://cdn.example.com/a%5C..%5Cx.m3u8',
      'https://cdn.example.com\\@evil.example/x.m3u8',
      'https://cdn.example.com/a b.m3u8',
      'https://cdn.example.com/a\tb.m3u8',
      'https://cdn.example.com/a\u0000.m3u8',
      ' https://cdn.example.com/x.m3u8',
      'https://cdn.example.com/x.m3u8\n',
    ]) {
      const r = await sign(bad);
      expect([bad, r.status, (r.json as { code?: string }).code]).toEqual([bad, 400, 'invalid_url']);
    }
    const ok = await sign('HTTPS://CDN.Example.com:443/live/./a/../master.m3u8');
    expect(ok.status).toBe(200);
    const body = ok.json as { url: string; jws: string };
    expect(body.url).toBe('https://cdn.example.com/live/master.m3u8');
    const [, payload] = body.jws.split('.');
    expect(JSON.parse(Buffer.from(payload!, 'base64url').toString()).url).toBe('https://cdn.example.com/live/master.m3u8');
  });
});

describe('revocation', () => {
  it('refuses a revoked token in every API process within seconds, without a restart', async () => {
    const second = await startApi(apiConfig(t.wh.root, { REVOCATION_POLL_SECONDS: '0.5' }), silentLogger);
    try {
      const secret = await tokenSecret(t.wh.layout, null);
      const token = await issueToken(secret, { role: 'tenant', tenant: t.tenants['acme']! }, 3600);
      const other = await issueToken(secret, { role: 'tenant', tenant: t.tenants['acme']! }, 3600);
      const get = (url: string, tok: string) => fetch(`${url}/telemetry/streams`, { headers: { Authorization: `Bearer ${tok}` } });
      for (const url of [t.url, second.url]) expect((await get(url, token)).status).toBe(200);
      const revoked = await cli(['token', 'revoke', token, '--warehouse', t.wh.root]);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect(revoked.stdout).toMatch(/^revoked: token [0-9a-f-]{36}/);
      const revokedAt = Date.now();
      for (const url of [t.url, second.url]) {
        await expect.poll(async () => (await get(url, token)).status, { timeout: 5000, interval: 100 }).toBe(401);
        const r = await get(url, token);
        expect(await r.json()).toMatchObject({ code: 'invalid_token', detail: 'The token has been revoked.' });
        // Another token of the same tenant is unaffected.
        expect((await get(url, other)).status).toBe(200);
      }
      expect(Date.now() - revokedAt).toBeLessThan(5000);
      // By id, as printed when it was issued.
      const jti = decodeJwt(other).jti!;
      expect((await cli(['token', 'revoke', jti, '--warehouse', t.wh.root])).code).toBe(0);
      await expect.poll(async () => (await get(second.url, other)).status, { timeout: 5000, interval: 100 }).toBe(401);
    } finally {
      await second.close();
    }
  });

  it("accepts a new tenant's token on its first request, whatever the poll time, and still refuses an unknown tenant's", async () => {
    // The tenant list polled every 10 minutes, and read once already (at start): the tenant is made after.
    const slow = await startApi(apiConfig(t.wh.root, { REVOCATION_POLL_SECONDS: '600' }), silentLogger);
    try {
      const secret = await tokenSecret(t.wh.layout, null);
      const tenant = await addTenant(t.wh.layout, { customerId: 'hooli', name: 'Hooli', cdnPricePerGb: null, savingsSharePct: 25 });
      const token = await issueToken(secret, { role: 'tenant', tenant }, 3600);
      const get = () => fetch(`${slow.url}/telemetry/streams`, { headers: { Authorization: `Bearer ${token}` } });
      expect((await get()).status).toBe(200);
      // A token of a tenant that is not in the list, looked at again, is still refused.
      const stranger = await issueToken(secret, { role: 'tenant', tenant: { ...tenant, customerId: 'nobody' } }, 3600);
      const refused = await fetch(`${slow.url}/telemetry/streams`, { headers: { Authorization: `Bearer ${stranger}` } });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({ code: 'invalid_token', detail: 'The tenant of this token no longer exists.' });
    } finally {
      await slow.close();
    }
  });

  it('limits token lifetimes (configurable) and says how to revoke in token --help', async () => {
    const long = await cli(['token', '--customer', 'acme', '--ttl', '100d', '--warehouse', t.wh.root]);
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(/--ttl: a lifetime is between 1 second and 90d/);
    const operator = await cli(['token', '--role', 'operator', '--ttl', '31d', '--warehouse', t.wh.root]);
    expect(operator.stderr).toMatch(/between 1 second and 30d/);
    const allowed = await cli(['token', '--customer', 'acme', '--ttl', '100d', '--warehouse', t.wh.root], { TOKEN_TENANT_TTL_MAX: '120d' });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(decodeJwt(allowed.stdout.trim()).exp! - decodeJwt(allowed.stdout.trim()).iat!).toBe(100 * 86_400);
    expect(allowed.stderr).toMatch(/token id [0-9a-f-]{36}.*token revoke/);
    const help = await cli(['token', '--help']);
    expect(help.stdout).toMatch(/token revoke <token \| token id>/);
    expect(help.stdout).toMatch(/tenants remove --customer ID/);
  });

  it('refuses every token of a removed tenant, its signing included, within seconds', async () => {
    const secret = await tokenSecret(t.wh.layout, null);
    const tenant = await addTenant(t.wh.layout, { customerId: 'initech', name: 'Initech', cdnPricePerGb: null, savingsSharePct: 25 });
    const token = await issueToken(secret, { role: 'tenant', tenant }, 3600);
    const sign = () =>
      t.request('POST', '/manifest/sign', { token, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ url: 'https://cdn.example.com/x.m3u8' }) });
    await expect.poll(async () => (await sign()).status, { timeout: 5000, interval: 100 }).toBe(200);
    const removed = await cli(['tenants', 'remove', '--customer', 'initech', '--warehouse', t.wh.root]);
    expect(removed.code, removed.stderr).toBe(0);
    // The signing route re-reads the tenant list itself: refused at once.
    const refused = await sign();
    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({ code: 'invalid_token', detail: 'The tenant of this token no longer exists.' });
    await expect.poll(async () => (await t.get('/telemetry/streams', token)).status, { timeout: 5000, interval: 100 }).toBe(401);
    // Created again, the customer's old tokens stay refused (another tenant id).
    await addTenant(t.wh.layout, { customerId: 'initech', name: 'Initech again', cdnPricePerGb: null, savingsSharePct: 25 });
    await new Promise((r) => setTimeout(r, 1200));
    expect((await t.get('/telemetry/streams', token)).status).toBe(401);
    expect(lines.some((l) => l['reqId'] && l['status'] === 401)).toBe(true);
  });
});
