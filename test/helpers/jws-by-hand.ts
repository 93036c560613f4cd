// A compact JWS (ES256) checked by hand with node:crypto alone: independent of jose and of the
// project's verifier (pilot/statement-verify.ts), as a reader of docs/pilot-reports.md would do it.
import { createHash, createPublicKey, verify } from 'node:crypto';

export interface HandJwk {
  kty: string;
  crv?: string;
  x?: string;
  y?: string;
  kid?: string;
}

/** The payload of `jws` when its ES256 signature verifies with the key of its header's kid in `keys`; else null. */
export function verifyByHand(jws: string, keys: readonly HandJwk[]): Record<string, unknown> | null {
  const parts = jws.split('.');
  if (parts.length !== 3) return null;
  const [head, body, signature] = parts as [string, string, string];
  const header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as { alg?: string; kid?: string };
  const jwk = keys.find((k) => k.kid === header.kid);
  if (header.alg !== 'ES256' || !jwk || jwk.kty !== 'EC' || jwk.crv !== 'P-256') return null;
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }, format: 'jwk' });
  // A JWS carries ECDSA's r and s side by side (RFC 7518 §3.4), not DER.
  const ok = verify('sha256', Buffer.from(`${head}.${body}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  return ok ? (JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>) : null;
}

/** The kid of an EC public key by RFC 7638: SHA-256 of its required members in lexicographic order. */
export function thumbprintByHand(jwk: { crv: string; kty: string; x: string; y: string }): string {
  return createHash('sha256').update(`{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}","y":"${jwk.y}"}`).digest('base64url');
}

export const sha256HexByHand = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
