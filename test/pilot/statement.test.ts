// Statements through the real key store: any changed byte of any format named, an unknown key or a
// forged signature refused, a rotated-out key verifying for its retention time and not after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import { tempDir } from '../helpers/warehouse.ts';
import { warehouseLayout, type WarehouseLayout } from '../../warehouse/layout.ts';
import { currentReportKey, listReportKeys, reportJwks, reportKeysFile, rotateReportKey } from '../../control/report-keys.ts';
import { signStatement, type StatementClaims } from '../../pilot/statement.ts';
import { checkFiles, checkSignature } from '../../pilot/statement-verify.ts';
import { REPORT_FORMATS, type ReportFormat } from '../../pilot/report-formats.ts';

const DAY = 86_400_000;
const RETENTION = 30 * DAY;
const CLAIMS: StatementClaims = {
  customerId: 'acme',
  streamId: 'acme:live-main',
  snapshotId: '20261120T115500000Z-0badc0de',
  asOf: '2026-11-20T11:55:00.000Z',
  bucketSeconds: 600,
  reportVersion: 1,
  verdict: 'review',
};
const BODIES: Record<ReportFormat, Buffer> = {
  json: Buffer.from('{\n  "streamId": "acme:live-main"\n}\n'),
  md: Buffer.from('# Pilot report: acme:live-main\n\nNet savings: USD 1,234.56 — ✓\n'),
  html: Buffer.from('<!DOCTYPE html>\n<p>Net savings: USD 1,234.56</p>\n'),
};

let dirs: string[] = [];
async function layout(): Promise<WarehouseLayout> {
  const dir = await tempDir();
  dirs.push(dir);
  return warehouseLayout(dir);
}
let main: WarehouseLayout;
beforeAll(async () => {
  main = await layout();
});
afterAll(async () => {
  await Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true })));
  dirs = [];
});

describe('a statement', () => {
  it('verifies with the JWK Set, and every file matches', async () => {
    const jws = await signStatement(CLAIMS, BODIES, await currentReportKey(main));
    const sig = await checkSignature(jws, await reportJwks(main, RETENTION));
    expect(sig.ok).toBe(true);
    if (!sig.ok) return;
    expect(sig.payload).toMatchObject({ statement: 'pilot-report', ...CLAIMS });
    expect(checkFiles(sig.payload, BODIES).map((c) => c.status)).toEqual(['ok', 'ok', 'ok']);
  });

  it('names the one format whose bytes changed, wherever the byte is', async () => {
    const jws = await signStatement(CLAIMS, BODIES, await currentReportKey(main));
    const sig = await checkSignature(jws, await reportJwks(main, RETENTION));
    if (!sig.ok) throw new Error(sig.detail);
    for (const format of REPORT_FORMATS) {
      const length = BODIES[format].length;
      for (const at of [0, Math.floor(length / 2), length - 1]) {
        const changed = Buffer.from(BODIES[format]);
        changed[at] = changed[at]! ^ 0x01;
        const checks = checkFiles(sig.payload, { ...BODIES, [format]: changed });
        expect(checks.filter((c) => c.status !== 'ok').map((c) => [c.format, c.status]), `${format}@${at}`).toEqual([[format, 'differs']]);
      }
      const longer = checkFiles(sig.payload, { ...BODIES, [format]: Buffer.concat([BODIES[format], Buffer.from('\n')]) });
      expect(longer.find((c) => c.format === format)!.status).toBe('differs');
    }
  });

  it('fails when signed by a key the JWK Set does not hold, or when its signature or payload was changed', async () => {
    const other = await layout();
    const foreign = await signStatement(CLAIMS, BODIES, await currentReportKey(other));
    expect(await checkSignature(foreign, await reportJwks(main, RETENTION))).toMatchObject({ ok: false, reason: 'unknown_key' });

    const jws = await signStatement(CLAIMS, BODIES, await currentReportKey(main));
    const [head, body, signature] = jws.split('.') as [string, string, string];
    const jwks = await reportJwks(main, RETENTION);
    const forgedBody = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), verdict: 'pass' })).toString('base64url');
    expect(await checkSignature(`${head}.${forgedBody}.${signature}`, jwks)).toMatchObject({ ok: false, reason: 'bad_signature' });
    const flipped = Buffer.from(signature, 'base64url');
    flipped[5] = flipped[5]! ^ 0x80;
    expect(await checkSignature(`${head}.${body}.${flipped.toString('base64url')}`, jwks)).toMatchObject({ ok: false, reason: 'bad_signature' });
    // The foreign key's public half under our kid: the kid finds a key, the signature still fails.
    const theirs = (await reportJwks(other, RETENTION)).keys[0]!;
    const mixed = { keys: [{ ...theirs, kid: jwks.keys[0]!.kid }] };
    expect(await checkSignature(jws, mixed)).toMatchObject({ ok: false, reason: 'bad_signature' });
    expect(await checkSignature('not.a.jws', jwks)).toMatchObject({ ok: false, reason: 'malformed' });
  });
});

describe('key rotation', () => {
  it('signs with the new key from then on; the retired key verifies for its retention time, and not after', async () => {
    const store = await layout();
    const t0 = new Date('2026-01-01T00:00:00Z');
    const old = await currentReportKey(store);
    const signedBefore = await signStatement(CLAIMS, BODIES, old, t0);
    const rotation = await rotateReportKey(store, RETENTION, t0);
    expect(rotation).toMatchObject({ retired: old.kid, dropped: [] });
    const now = await currentReportKey(store);
    expect(now.kid).toBe(rotation.current);
    expect(now.kid).not.toBe(old.kid);

    const within = await reportJwks(store, RETENTION, new Date(t0.getTime() + RETENTION - 1));
    expect(within.keys.map((k) => k.kid)).toEqual([now.kid, old.kid]);
    expect(await checkSignature(signedBefore, within)).toMatchObject({ ok: true, kid: old.kid });

    const after = await reportJwks(store, RETENTION, new Date(t0.getTime() + RETENTION));
    expect(after.keys.map((k) => k.kid)).toEqual([now.kid]);
    expect(await checkSignature(signedBefore, after)).toMatchObject({ ok: false, reason: 'unknown_key' });
    expect(await checkSignature(await signStatement(CLAIMS, BODIES, now), after)).toMatchObject({ ok: true, kid: now.kid });

    // The retired key's private half is gone from the store at once; the next rotation past its
    // retention removes it whole.
    const stored = JSON.parse(await fs.readFile(reportKeysFile(store), 'utf8')) as { keys: { kid: string; d: string | null }[] };
    expect(stored.keys.find((k) => k.kid === old.kid)!.d).toBeNull();
    expect((await fs.stat(reportKeysFile(store))).mode & 0o777).toBe(0o600);
    const later = await rotateReportKey(store, RETENTION, new Date(t0.getTime() + RETENTION + DAY));
    expect(later).toMatchObject({ retired: now.kid, dropped: [old.kid] });
    const listed = await listReportKeys(store, RETENTION, new Date(t0.getTime() + RETENTION + DAY));
    expect(listed.map((k) => [k.kid, k.state])).toEqual([
      [now.kid, 'retired'],
      [later.current, 'current'],
    ]);
  });

  it('makes one key when processes ask for the first at once', async () => {
    const store = await layout();
    const kids = await Promise.all(Array.from({ length: 5 }, async () => (await currentReportKey(store)).kid));
    expect(new Set(kids).size).toBe(1);
    expect((await reportJwks(store, RETENTION)).keys).toHaveLength(1);
  });
});
