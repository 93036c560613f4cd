// Ingest keys: kept hashed in a 0600 control file, printed once by the CLI, refused by a running
// collector within REVOCATION_POLL_SECONDS of being revoked or of their tenant going (the
// collector looks at the documents that often, not on every request), and good only for their
// customer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import { startTestCollector, sampleReport, type TestCollector } from '../helpers/collector.ts';
import type { TestResponse } from '../helpers/api.ts';
import { eventually } from '../helpers/child-api.ts';
import { addIngestKey, hashIngestKey, IngestKeyChecker, ingestKeysFile, listIngestKeys, revokeIngestKey } from '../../control/ingest-keys.ts';
import { Revocation } from '../../control/revocation.ts';
import { addTenant, tenantsFile } from '../../control/tenants.ts';
import { writeJsonDurable } from '../../lib/fsx.ts';
import { cli, cliAll } from '../helpers/cli.ts';

let t: TestCollector;
const recent = () => new Date(Date.now() - 60_000);
const one = (streamId: string, n: number) => JSON.stringify({ reports: [sampleReport(streamId, recent(), n)] });

const POLL_SECONDS = 0.2;

beforeAll(async () => {
  t = await startTestCollector({ env: { REVOCATION_POLL_SECONDS: String(POLL_SECONDS) } });
}, 60_000);

/**
 * Post until the answer has `status` (a change of keys or tenants is seen within the poll time),
 * at most 3 s; the last answer, and how long it took to get it.
 */
async function until(status: number, post: () => Promise<TestResponse>): Promise<{ res: TestResponse; ms: number }> {
  const started = performance.now();
  let res: TestResponse | undefined;
  await eventually(async () => (res = await post()).status === status, 3_000, 20);
  return { res: res!, ms: performance.now() - started };
}

afterAll(async () => {
  await t?.close();
});

describe('ingest keys', () => {
  it('are stored as hashes only, in a file of mode 0600', async () => {
    const file = ingestKeysFile(t.wh.layout);
    const text = await fs.readFile(file, 'utf8');
    expect(text).not.toContain(t.keys['acme']!);
    expect(text).toContain(hashIngestKey(t.keys['acme']!));
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
  });

  it('a revocation is seen by the running collector within the poll time', async () => {
    const { key, record } = await addIngestKey(t.wh.layout, { customer: 'acme' });
    expect((await until(202, () => t.post(one('acme:live-main', 1), { key }))).res.status).toBe(202);
    await revokeIngestKey(t.wh.layout, record.id);
    const { res, ms } = await until(401, () => t.post(one('acme:live-main', 2), { key }));
    expect(res.status).toBe(401);
    // The same words for every refused key: a guess cannot tell a revoked key from an unknown one.
    expect((res.json as { detail: string }).detail).toBe('This ingest key is not valid.');
    expect(ms).toBeLessThan(POLL_SECONDS * 1000 + 500);
    expect((await fs.stat(ingestKeysFile(t.wh.layout))).mode & 0o777).toBe(0o600);
  });

  it('a key made while a collector runs works at once, even a moment after a look, whatever the poll time', async () => {
    const slow = await startTestCollector({ env: { REVOCATION_POLL_SECONDS: '600' } });
    try {
      expect((await slow.post(one('acme:live-main', 20))).status).toBe(202); // the documents looked at
      // Posted at once: the key was made a moment after the documents were looked at, and is accepted.
      const { key } = await addIngestKey(slow.wh.layout, { customer: 'acme' });
      expect((await slow.post(one('acme:live-main', 21), { key })).status).toBe(202);
      // A new tenant's first key too: the tenants are looked at again with the keys.
      await addTenant(slow.wh.layout, { customerId: 'initech', name: 'Initech', cdnPricePerGb: null, savingsSharePct: 25 });
      const { key: newTenantKey } = await addIngestKey(slow.wh.layout, { customer: 'initech' });
      expect((await slow.post(one('initech:live', 23), { key: newTenantKey })).status).toBe(202);
      // A key nobody made stays unknown, and is answered as such.
      const res = await slow.post(one('acme:live-main', 22), { key: `ingest_${'x'.repeat(32)}` });
      expect(res.status).toBe(401);
      expect((res.json as { detail: string }).detail).toBe('This ingest key is not valid.');
    } finally {
      await slow.close();
    }
  });

  it("a new tenant's key works at once when the keys are looked at after it was made and the tenants before", async () => {
    // The keys looked at on every check, the tenants never by the poll (10 minutes): read at start,
    // before the tenant was made, as a collector's timer may have read them a moment before.
    const tenants = await Revocation.start(t.wh.layout, 600_000);
    try {
      const keys = new IngestKeyChecker(t.wh.layout, 0, tenants);
      await addTenant(t.wh.layout, { customerId: 'hooli', name: 'Hooli', cdnPricePerGb: null, savingsSharePct: 25 });
      const { key } = await addIngestKey(t.wh.layout, { customer: 'hooli' });
      expect(await keys.check(key)).toMatchObject({ ok: true, customerId: 'hooli' });
    } finally {
      tenants.stop();
    }
  });

  it('a key document that cannot be read keeps the keys last read: posts go on, and a repaired document is read again', async () => {
    const file = ingestKeysFile(t.wh.layout);
    const good = await fs.readFile(file, 'utf8');
    expect((await t.post(one('acme:live-main', 30))).status).toBe(202);
    try {
      await fs.writeFile(file, '{not json');
      await new Promise((r) => setTimeout(r, POLL_SECONDS * 1000 * 2)); // looked at again, in vain
      expect((await t.post(one('acme:live-main', 31))).status).toBe(202);
    } finally {
      await fs.writeFile(file, good);
    }
    const { key, record } = await addIngestKey(t.wh.layout, { customer: 'acme' });
    expect((await until(202, () => t.post(one('acme:live-main', 32), { key }))).res.status).toBe(202);
    await revokeIngestKey(t.wh.layout, record.id);
    expect((await until(401, () => t.post(one('acme:live-main', 33), { key }))).res.status).toBe(401);
  });

  it("a key writes only its customer's streams", async () => {
    expect((await t.post(one('globex:live-main', 3), { key: t.keys['globex']! })).status).toBe(202);
    expect((await t.post(one('globex:live-main', 4), { key: t.keys['acme']! })).status).toBe(403);
  });

  it("a key of a customer that has no tenant any more is refused, and a new tenant of that customer does not revive it", async () => {
    const tenant = await addTenant(t.wh.layout, { customerId: 'umbrella', name: 'Umbrella', cdnPricePerGb: null, savingsSharePct: 25 });
    const { key } = await addIngestKey(t.wh.layout, { customer: 'umbrella' });
    expect((await until(202, () => t.post(one('umbrella:live', 5), { key }))).res.status).toBe(202);
    // What `tenants remove` does to the document: the tenant is no longer listed.
    const doc = JSON.parse(await fs.readFile(tenantsFile(t.wh.layout), 'utf8')) as { version: 1; tenants: { id: string }[] };
    await writeJsonDurable(tenantsFile(t.wh.layout), { ...doc, tenants: doc.tenants.filter((x) => x.id !== tenant.id) });
    const { res: gone } = await until(401, () => t.post(one('umbrella:live', 6), { key }));
    expect(gone.status).toBe(401);
    expect((gone.json as { detail: string }).detail).toBe('This ingest key is not valid.');
    await addTenant(t.wh.layout, { customerId: 'umbrella', name: 'Umbrella again', cdnPricePerGb: null, savingsSharePct: 25 });
    await new Promise((r) => setTimeout(r, POLL_SECONDS * 1000 * 2)); // the new tenant is seen
    expect((await t.post(one('umbrella:live', 7), { key })).status).toBe(401);
  });

  it('collect and ingest-keys have --help naming --warehouse', async () => {
    const commands = ['collect', 'ingest-keys add', 'ingest-keys list', 'ingest-keys revoke'];
    const results = await cliAll(commands.map((c): [string[]] => [[...c.split(' '), '--help']]));
    for (const [i, c] of commands.entries()) {
      const r = results[i]!;
      expect(r.code, c).toBe(0);
      expect(r.stdout).toContain(`Usage: p2ptel ${c}`);
      expect(r.stdout).toContain('--warehouse <dir>');
    }
  });

  it('generate --post says clearly what it needs', async () => {
    // Three refusals, independent of each other: started together, each checked alone.
    const [noKey, two, badUrl] = await cliAll([
      [['generate', '--post', t.url, '--customers', 'acme', '--warehouse', t.wh.root]],
      [['generate', '--post', t.url, '--key', t.keys['acme']!, '--customers', 'acme,globex', '--warehouse', t.wh.root]],
      [['generate', '--post', 'ftp://x', '--key', t.keys['acme']!, '--customers', 'acme', '--warehouse', t.wh.root]],
    ]);
    expect(noKey!.code).toBe(2);
    expect(noKey!.stderr).toMatch(/--post needs --key/);
    expect(two!.code).toBe(2);
    expect(two!.stderr).toMatch(/one ingest key/);
    expect(badUrl!.code).toBe(2);
  });

  it('the CLI prints a key once, lists keys without them, and revokes by key', async () => {
    const added = await cli(['ingest-keys', 'add', '--customer', 'acme', '--label', 'web player', '--warehouse', t.wh.root]);
    expect(added.code, added.stderr).toBe(0);
    const key = added.stdout.trim();
    expect(key).toMatch(/^ingest_[A-Za-z0-9_-]{32}$/);
    expect((await until(202, () => t.post(one('acme:live-main', 8), { key }))).res.status).toBe(202);
    const listed = await cli(['ingest-keys', 'list', '--warehouse', t.wh.root]);
    expect(listed.stdout).toContain('web player');
    expect(listed.stdout).toContain(`…${key.slice(-4)}`);
    expect(listed.stdout).not.toContain(key);
    const revoked = await cli(['ingest-keys', 'revoke', key, '--warehouse', t.wh.root]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await until(401, () => t.post(one('acme:live-main', 9), { key }))).res.status).toBe(401);
    const unknownCustomer = await cli(['ingest-keys', 'add', '--customer', 'nobody', '--warehouse', t.wh.root]);
    expect(unknownCustomer.code).toBe(2);
    expect(unknownCustomer.stderr).toMatch(/no tenant/);
    const unknownKey = await cli(['ingest-keys', 'revoke', 'ikey_01ARZ3NDEKTSV4RRFFQ69G5FAV', '--warehouse', t.wh.root]);
    expect(unknownKey.code).toBe(2);
    expect((await listIngestKeys(t.wh.layout)).filter((k) => k.revokedAt !== null).length).toBeGreaterThanOrEqual(2);
  });
});
