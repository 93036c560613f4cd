// Files and sockets (issue 16, point 8): the control area is private (0700, files 0600, fixed at
// start whatever was there), header and request deadlines act within about a second of their
// configured values, and connections beyond the cap are closed at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { apiConfig } from '../helpers/api.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { silentLogger } from '../../lib/log.ts';
import { addTenant, tenantsFile } from '../../control/tenants.ts';
import { originsFile, replaceOrigins } from '../../control/origins.ts';

let wh: TestWarehouse;
let api: RunningApi;
let port: number;
let tenantId: string;

beforeAll(async () => {
  wh = await openTestWarehouse();
  tenantId = (await addTenant(wh.layout, { customerId: 'acme', name: 'Acme', cdnPricePerGb: null, savingsSharePct: 25 })).id;
  await replaceOrigins(wh.layout, tenantId, ['https://cdn.acme.example']);
  // What an older version (or a hand edit) left: world-readable control data.
  await fs.chmod(wh.layout.control, 0o755);
  await fs.chmod(tenantsFile(wh.layout), 0o644);
  await fs.chmod(originsFile(wh.layout, tenantId), 0o644);
  api = await startApi(
    apiConfig(wh.root, { API_HEADERS_TIMEOUT_SECONDS: '2', API_REQUEST_TIMEOUT_SECONDS: '3', API_MAX_CONNECTIONS: '3' }),
    silentLogger,
  );
  port = Number(new URL(api.url).port);
}, 120_000);

afterAll(async () => {
  await api?.close();
  await wh?.close();
});

const mode = async (p: string) => (await fs.stat(p)).mode & 0o777;

describe('control area', () => {
  it('is made private at start, and documents written later are 0600', async () => {
    expect(await mode(wh.layout.control)).toBe(0o700);
    expect(await mode(tenantsFile(wh.layout))).toBe(0o600);
    expect(await mode(originsFile(wh.layout, tenantId))).toBe(0o600);
    expect(await mode(path.dirname(originsFile(wh.layout, tenantId)))).toBe(0o700);
    await replaceOrigins(wh.layout, tenantId, ['https://cdn2.acme.example']);
    expect(await mode(originsFile(wh.layout, tenantId))).toBe(0o600);
    for (const f of await fs.readdir(wh.layout.control, { withFileTypes: true })) {
      if (f.isFile()) expect([f.name, await mode(path.join(wh.layout.control, f.name))]).toEqual([f.name, 0o600]);
    }
  });
});

/** Open a connection, send `data`, and resolve with how long until the server ends it, and what it said. */
function until(data: string): Promise<{ ms: number; text: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect(port, '127.0.0.1', () => socket.write(data));
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', () => resolve({ ms: performance.now() - started, text }));
    socket.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
  });
}

describe('deadlines and the connection cap', () => {
  it('ends a request whose headers never finish about when the headers timeout says (2 s)', async () => {
    const r = await until('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    expect(r.ms).toBeGreaterThan(1900);
    expect(r.ms).toBeLessThan(3500);
    expect(r.text).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes connections beyond the cap at once, and accepts again once one has gone', async () => {
    const open = await Promise.all(
      Array.from({ length: 3 }, () => new Promise<net.Socket>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => resolve(s));
        s.on('error', () => {});
      })),
    );
    await new Promise((r) => setTimeout(r, 100));
    const extra = await until('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(extra.text).toBe('');
    expect(extra.ms).toBeLessThan(1000);
    for (const s of open) s.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const res = await fetch(`${api.url}/healthz`);
    expect(res.status).toBe(200);
  });
});
