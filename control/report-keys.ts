// The report-signing keys (ES256, never the manifest key), control/report-signing-keys.json (0600):
// one current key signs statements, `keys rotate` retires it; only public halves leave this module.
import path from 'node:path';
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint } from 'jose';
import { z } from 'zod';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { readDocumentCached, updateDocument } from './documents.ts';

const base64url = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'a 32-byte base64url value');

const StoredKeySchema = z.object({
  /** RFC 7638 thumbprint of the public key: anyone can recompute it from the JWK Set. */
  kid: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  createdAt: z.iso.datetime(),
  /** null: the current key. */
  retiredAt: z.iso.datetime().nullable(),
  x: base64url,
  y: base64url,
  /** The private scalar; null once retired (a retired key verifies, it never signs again). */
  d: base64url.nullable(),
});
type StoredKey = z.infer<typeof StoredKeySchema>;

const KeysDocSchema = z
  .object({ keys: z.array(StoredKeySchema) })
  .refine((doc) => doc.keys.filter((k) => k.retiredAt === null).length <= 1, 'at most one current key')
  .refine((doc) => doc.keys.every((k) => (k.retiredAt === null) === (k.d !== null)), 'the current key, and only it, has its private half');
type KeysDoc = z.infer<typeof KeysDocSchema>;

const EMPTY: KeysDoc = { keys: [] };

/** A public report-signing key as GET /.well-known/jwks.json lists it (never a private member). */
export type ReportJwk = {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  use: 'sig';
  alg: 'ES256';
};

export interface ReportSigningKey {
  kid: string;
  privateKey: KeyObject;
}

export interface Rotation {
  current: string;
  retired: string | null;
  /** Retired keys past their retention, removed from the store. */
  dropped: string[];
}

export function reportKeysFile(layout: WarehouseLayout): string {
  return path.join(layout.control, 'report-signing-keys.json');
}

async function newKey(now: Date): Promise<StoredKey> {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const x = String(jwk.x);
  const y = String(jwk.y);
  const kid = await calculateJwkThumbprint({ kty: 'EC', crv: 'P-256', x, y }, 'sha256');
  return { kid, createdAt: now.toISOString(), retiredAt: null, x, y, d: String(jwk.d) };
}

/** Private key objects by stored entry: a document read again is a new object, so no stale key. */
const privateKeys = new WeakMap<StoredKey, KeyObject>();

function signingKeyOf(key: StoredKey): ReportSigningKey {
  let privateKey = privateKeys.get(key);
  if (!privateKey) {
    privateKey = createPrivateKey({ key: { kty: 'EC', crv: 'P-256', x: key.x, y: key.y, d: key.d! }, format: 'jwk' });
    privateKeys.set(key, privateKey);
  }
  return { kid: key.kid, privateKey };
}

/** The key that signs now, made (under the document's lock, once across processes) when there is none. */
export async function currentReportKey(layout: WarehouseLayout): Promise<ReportSigningKey> {
  const file = reportKeysFile(layout);
  const found = (await readDocumentCached(file, KeysDocSchema, EMPTY)).keys.find((k) => k.retiredAt === null);
  if (found) return signingKeyOf(found);
  const made = await updateDocument(file, KeysDocSchema, EMPTY, async (doc) => {
    const current = doc.keys.find((k) => k.retiredAt === null);
    if (current) return { next: doc, result: current };
    const key = await newKey(new Date());
    return { next: { keys: [...doc.keys, key] }, result: key };
  });
  return signingKeyOf(made);
}

const expired = (k: StoredKey, retentionMs: number, now: Date) => k.retiredAt !== null && Date.parse(k.retiredAt) + retentionMs <= now.getTime();

/**
 * Retire the current key (its private half is dropped) and make a new one that signs from now on;
 * retired keys past `retentionMs` leave the store.
 */
export function rotateReportKey(layout: WarehouseLayout, retentionMs: number, now = new Date()): Promise<Rotation> {
  return updateDocument(reportKeysFile(layout), KeysDocSchema, EMPTY, async (doc) => {
    const fresh = await newKey(now);
    const previous = doc.keys.find((k) => k.retiredAt === null) ?? null;
    const kept = doc.keys.filter((k) => !expired(k, retentionMs, now)).map((k) => (k.retiredAt === null ? { ...k, retiredAt: now.toISOString(), d: null } : k));
    const dropped = doc.keys.filter((k) => expired(k, retentionMs, now)).map((k) => k.kid);
    return { next: { keys: [...kept, fresh] }, result: { current: fresh.kid, retired: previous?.kid ?? null, dropped } };
  });
}

/** The JWK Set of report keys valid at `now`: the current key and those retired less than `retentionMs` ago, newest first. */
export async function reportJwks(layout: WarehouseLayout, retentionMs: number, now = new Date()): Promise<{ keys: ReportJwk[] }> {
  const doc = await readDocumentCached(reportKeysFile(layout), KeysDocSchema, EMPTY);
  const valid = doc.keys.filter((k) => !expired(k, retentionMs, now));
  return { keys: valid.reverse().map((k) => ({ kty: 'EC', crv: 'P-256', x: k.x, y: k.y, kid: k.kid, use: 'sig', alg: 'ES256' })) };
}

export interface ReportKeyInfo {
  kid: string;
  createdAt: string;
  retiredAt: string | null;
  /** When it leaves the JWK Set; null for the current key. */
  publishedUntil: string | null;
  state: 'current' | 'retired' | 'expired';
}

/** Every stored key (no private member), oldest first. */
export async function listReportKeys(layout: WarehouseLayout, retentionMs: number, now = new Date()): Promise<ReportKeyInfo[]> {
  const doc = await readDocumentCached(reportKeysFile(layout), KeysDocSchema, EMPTY);
  return doc.keys.map((k) => ({
    kid: k.kid,
    createdAt: k.createdAt,
    retiredAt: k.retiredAt,
    publishedUntil: k.retiredAt === null ? null : new Date(Date.parse(k.retiredAt) + retentionMs).toISOString(),
    state: k.retiredAt === null ? 'current' : expired(k, retentionMs, now) ? 'expired' : 'retired',
  }));
}
