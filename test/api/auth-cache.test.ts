// Verified tokens are remembered by the API (api/auth.ts) so that repeated calls skip the HMAC; the
// memory must never let a token through that would be refused without it: expiry is checked on
// every request, revocation and removed tenants too, and only the exact header that verified hits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import Koa from 'koa';
import { TokenAuth, callerOf } from '../../api/auth.ts';
import { requestFrame } from '../../lib/http/frame.ts';
import { issueToken } from '../../api/tokens.ts';
import { credentialRefusal, type RevocationState } from '../../control/revocation.ts';
import { silentLogger } from '../../lib/log.ts';
import type { Tenant } from '../../control/tenants.ts';

const secret = randomBytes(32);
const tenant: Tenant = { id: 't_01JCZ5M3R8W6Y0Q2N4P6S8T0V2', customerId: 'acme', name: 'Acme', cdnPricePerGb: null, savingsSharePct: 25, createdAt: '2026-11-01T00:00:00Z' };
// The revocation rule itself, over a state the test changes (the API polls it from the control area).
const state: { revokedIds: Set<string>; tenantOfCustomer: Map<string, string> } = { revokedIds: new Set(), tenantOfCustomer: new Map([['acme', tenant.id]]) };
const refusal = (cred: Parameters<typeof credentialRefusal>[1]) => credentialRefusal(state as RevocationState, cred);
const revocation = { refusal, refusalLookingAgain: (cred: Parameters<typeof credentialRefusal>[1]) => Promise.resolve(refusal(cred)) };

let server: http.Server;
let url: string;

beforeAll(async () => {
  const app = new Koa();
  app.silent = true;
  app.use(requestFrame(silentLogger));
  app.use(new TokenAuth(secret, revocation).middleware);
  app.use((ctx) => {
    const caller = callerOf(ctx);
    ctx.body = { role: caller.role, tokenId: caller.tokenId };
  });
  server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

async function call(authorization: string | null): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(url, { headers: authorization === null ? {} : { Authorization: authorization } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe('remembered tokens', () => {
  it('refuses a remembered token once it expires', async () => {
    const token = await issueToken(secret, { role: 'tenant', tenant }, 2);
    const exp = Math.floor(Date.now() / 1000) + 2;
    expect((await call(`Bearer ${token}`)).status).toBe(200);
    expect((await call(`Bearer ${token}`)).status).toBe(200); // remembered
    // Wait past its expiry (whole seconds), then the remembered entry must not answer.
    await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 50));
    const after = await call(`Bearer ${token}`);
    expect(after.status).toBe(401);
    expect(after.body['detail']).toMatch(/expired/);
  });

  it('refuses a remembered token as soon as it is revoked, and its tenant once removed', async () => {
    const token = await issueToken(secret, { role: 'tenant', tenant }, 3600);
    const first = await call(`Bearer ${token}`);
    expect(first.status).toBe(200);
    state.revokedIds.add(first.body['tokenId'] as string);
    expect((await call(`Bearer ${token}`)).body['detail']).toMatch(/revoked/);
    state.revokedIds.clear();
    expect((await call(`Bearer ${token}`)).status).toBe(200);
    state.tenantOfCustomer.delete('acme');
    expect((await call(`Bearer ${token}`)).body['detail']).toMatch(/no longer exists/);
    state.tenantOfCustomer.set('acme', tenant.id);
  });

  it('remembers the exact header only: a variant of a remembered one is parsed and refused', async () => {
    const token = await issueToken(secret, { role: 'operator' }, 3600);
    expect((await call(`Bearer ${token}`)).status).toBe(200);
    for (const variant of [`bearer ${token}`, `Bearer  ${token}`, `Bearer ${token}x`, `Bearer ${token.slice(0, -2)}`]) {
      expect((await call(variant)).status, variant).toBe(401);
    }
    expect((await call(null)).body['code']).toBe('missing_token');
  });
});
