// Checking a pilot report's signed statement: its signature against a JWK Set (by the header's kid),
// then each file's SHA-256 against the hashes it signs (`p2ptel verify-report`).
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { z } from 'zod';
import { REPORT_FORMATS, type ReportFormat } from './report-formats.ts';
import { sha256Hex, StatementPayloadSchema, type StatementPayload } from './statement.ts';

/** A JWK Set as any publisher may write it: keys of other types and extra members are allowed. */
export const JwksInputSchema = z.object({
  keys: z.array(z.looseObject({ kty: z.string(), kid: z.string().optional(), crv: z.string().optional(), x: z.string().optional(), y: z.string().optional(), use: z.string().optional(), alg: z.string().optional() })),
});
export type JwksInput = z.infer<typeof JwksInputSchema>;

const HeaderSchema = z.object({ alg: z.literal('ES256'), kid: z.string().min(1) });

export type SignatureCheck =
  | { ok: true; kid: string; payload: StatementPayload }
  | { ok: false; reason: 'malformed' | 'unknown_key' | 'bad_signature' | 'bad_payload'; detail: string };

export interface FileCheck {
  format: ReportFormat;
  /** ok: the bytes hash as signed; differs: they do not; missing: no such file was given. */
  status: 'ok' | 'differs' | 'missing';
  signed: string;
  actual: string | null;
}

function header(jws: string): z.infer<typeof HeaderSchema> | null {
  try {
    const parsed = HeaderSchema.safeParse(decodeProtectedHeader(jws));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The JWK of `kid` when it is a P-256 signing key for ES256 (a key that says otherwise is not used). */
function keyOf(jwks: JwksInput, kid: string): { kty: 'EC'; crv: 'P-256'; x: string; y: string } | null {
  const k = jwks.keys.find((key) => key.kid === kid);
  if (!k || k.kty !== 'EC' || k.crv !== 'P-256' || !k.x || !k.y) return null;
  if ((k.use !== undefined && k.use !== 'sig') || (k.alg !== undefined && k.alg !== 'ES256')) return null;
  return { kty: 'EC', crv: 'P-256', x: k.x, y: k.y };
}

/** Whether `jws` is a statement signed by a key of `jwks`, and what it says. */
export async function checkSignature(jws: string, jwks: JwksInput): Promise<SignatureCheck> {
  const text = jws.trim();
  const h = header(text);
  if (!h) return { ok: false, reason: 'malformed', detail: 'not a compact JWS with an ES256 header and a kid' };
  const jwk = keyOf(jwks, h.kid);
  if (!jwk) return { ok: false, reason: 'unknown_key', detail: `no ES256 key "${h.kid}" in the JWK Set (unknown, or retired longer ago than its retention)` };
  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(text, await importJWK(jwk, 'ES256'), { algorithms: ['ES256'] }));
  } catch {
    return { ok: false, reason: 'bad_signature', detail: `the signature does not verify with key "${h.kid}"` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(payload));
  } catch {
    return { ok: false, reason: 'bad_payload', detail: 'the signed payload is not JSON' };
  }
  const statement = StatementPayloadSchema.safeParse(parsed);
  if (!statement.success) return { ok: false, reason: 'bad_payload', detail: 'the signed payload is not a pilot-report statement' };
  return { ok: true, kid: h.kid, payload: statement.data };
}

/** Each format's bytes (those given) against the hash the statement signs. */
export function checkFiles(payload: StatementPayload, files: Partial<Record<ReportFormat, Uint8Array>>): FileCheck[] {
  return REPORT_FORMATS.map((format) => {
    const bytes = files[format];
    const signed = payload.sha256[format];
    if (!bytes) return { format, status: 'missing', signed, actual: null };
    const actual = sha256Hex(bytes);
    return { format, status: actual === signed ? 'ok' : 'differs', signed, actual };
  });
}
