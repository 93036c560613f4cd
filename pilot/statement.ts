// The signed statement of a pilot report (docs/api.md, "Report signatures"): a compact JWS over
// the SHA-256 of each format's exact bytes; the nightly run and the API both sign through here.
import { createHash } from 'node:crypto';
import { CompactSign } from 'jose';
import { z } from 'zod';
import { parseStreamId } from '../warehouse/ids.ts';
import type { ReportSigningKey } from '../control/report-keys.ts';
import type { PilotReport } from './model.ts';
import { REPORT_FORMATS, type ReportFormat } from './report-formats.ts';
import { InternalError } from '../lib/errors.ts';

/** The `typ` of a statement's header: tells it from any other JWS the platform signs. */
export const STATEMENT_TYPE = 'pilot-report-statement+jws';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex SHA-256');

/** What a statement says; a verifier checks the hashes, the rest says what the report is of. */
export const StatementPayloadSchema = z.object({
  statement: z.literal('pilot-report'),
  customerId: z.string(),
  streamId: z.string(),
  snapshotId: z.string(),
  asOf: z.iso.datetime({ offset: true }),
  bucketSeconds: z.number().int(),
  reportVersion: z.number().int(),
  verdict: z.enum(['pass', 'review']),
  /** When the statement was signed. */
  madeAt: z.iso.datetime({ offset: true }),
  /** Lowercase hex SHA-256 of each format's bytes exactly as served and published. */
  sha256: z.object({ json: sha256, md: sha256, html: sha256 }),
});
export type StatementPayload = z.infer<typeof StatementPayloadSchema>;

/** What the statement says a report is of: everything but the hashes and the signing time. */
export type StatementClaims = Omit<StatementPayload, 'statement' | 'sha256' | 'madeAt'>;

export class StatementError extends InternalError {
  override name = 'StatementError';
  override readonly errorCode = 'statement_invalid';
}

export function sha256Hex(bytes: string | Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The claims of a composed report. */
export function claimsOfReport(report: PilotReport): StatementClaims {
  return claimsOf(report);
}

/** Only what a statement takes from a report's JSON; the rest of it is covered by its hash. */
const ReportJsonClaims = z.object({
  streamId: z.string(),
  reportVersion: z.number().int(),
  bucketSeconds: z.number().int(),
  snapshot: z.object({ id: z.string(), asOf: z.string() }),
  conclusion: z.object({ assessment: z.enum(['pass', 'review']) }),
});

/** The claims of a report's JSON bytes (as served): the statement then says what those bytes say. */
export function claimsOfJson(body: string | Uint8Array): StatementClaims {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
  } catch {
    throw new StatementError('the report JSON is not JSON');
  }
  const report = ReportJsonClaims.safeParse(parsed);
  if (!report.success) throw new StatementError('the report JSON lacks what a statement needs (streamId, snapshot, conclusion)');
  return claimsOf(report.data);
}

function claimsOf(report: z.infer<typeof ReportJsonClaims>): StatementClaims {
  const id = parseStreamId(report.streamId);
  if (!id) throw new StatementError(`not a stream id: ${JSON.stringify(report.streamId)}`);
  return {
    customerId: id.customerId,
    streamId: report.streamId,
    snapshotId: report.snapshot.id,
    asOf: report.snapshot.asOf,
    bucketSeconds: report.bucketSeconds,
    reportVersion: report.reportVersion,
    verdict: report.conclusion.assessment,
  };
}

/** The compact JWS over the claims and the hash of each format's bytes, signed with `key` at `now`. */
export async function signStatement(
  claims: StatementClaims,
  bodies: Readonly<Record<ReportFormat, string | Uint8Array>>,
  key: ReportSigningKey,
  now = new Date(),
): Promise<string> {
  const hashes = Object.fromEntries(REPORT_FORMATS.map((f) => [f, sha256Hex(bodies[f])])) as Record<ReportFormat, string>;
  const payload: StatementPayload = { statement: 'pilot-report', ...claims, madeAt: now.toISOString(), sha256: hashes };
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: STATEMENT_TYPE })
    .sign(key.privateKey);
}
