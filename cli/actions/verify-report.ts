// The `verify-report` command's work: the statements a path names, checked against a JWK Set (a URL,
// a file, or the warehouse's keys), a line per statement, exit 7 when anything does not verify.
import fs from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { runtime } from '../runtime.ts';
import { describeZodError, EXIT, ExitError, UserError } from '../../lib/errors.ts';
import type { SettingOverrides } from '../../lib/config.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { reportJwks } from '../../control/report-keys.ts';
import { statementGroups, StatementInputError, type StatementGroup } from '../../pilot/statement-files.ts';
import { checkFiles, checkSignature, JwksInputSchema, type JwksInput } from '../../pilot/statement-verify.ts';
import type { ReportFormat } from '../../pilot/report-formats.ts';

export const Flags = z.object({ path: z.string().min(1, 'a report file or folder'), jwks: z.string().min(1).optional() });

const FETCH_TIMEOUT_MS = 10_000;

export async function run(flags: z.output<typeof Flags>, settings: SettingOverrides): Promise<void> {
  const groups = await statementGroups(flags.path).catch((err: unknown) => {
    throw err instanceof StatementInputError ? new UserError(err.message) : err;
  });
  const jwks = flags.jwks ? await jwksFrom(flags.jwks) : await warehouseJwks(settings);
  let failed = 0;
  for (const group of groups) {
    const { ok, line } = await verifyGroup(group, jwks);
    if (!ok) failed++;
    process.stdout.write(`${line}\n`);
  }
  if (failed > 0) throw new ExitError(`${failed} of ${groups.length} statement${groups.length === 1 ? '' : 's'} did not verify`, EXIT.verificationFailed);
}

/** The keys the API of this warehouse publishes now. */
async function warehouseJwks(settings: SettingOverrides): Promise<JwksInput> {
  const rt = runtime(settings);
  return reportJwks(warehouseLayout(rt.config.warehouseDir), rt.config.reportKeys.retentionMs);
}

/** A JWK Set from an http(s) URL or a file: bad input is exit 2, a server that cannot be reached exit 1. */
async function jwksFrom(source: string): Promise<JwksInput> {
  let text: string;
  if (/^https?:\/\//i.test(source)) {
    const res = await fetch(source, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) }).catch((err: unknown) => {
      throw new ExitError(`--jwks: cannot fetch ${source}: ${err instanceof Error ? err.message : String(err)}`, EXIT.failed);
    });
    if (!res.ok) throw new ExitError(`--jwks: ${source} answered ${res.status}`, EXIT.failed);
    text = await res.text();
  } else {
    text = await fs.readFile(source, 'utf8').catch(() => {
      throw new UserError(`--jwks: cannot read ${source}`);
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UserError(`--jwks: ${source} is not JSON`);
  }
  const parsed = JwksInputSchema.safeParse(json);
  if (!parsed.success) throw new UserError(`--jwks: ${source} is not a JWK Set (${describeZodError(parsed.error)})`);
  return parsed.data;
}

/** One statement: its line of output, and whether it verified. */
async function verifyGroup(group: StatementGroup, jwks: JwksInput): Promise<{ ok: boolean; line: string }> {
  const name = group.statement ?? `${group.base}.jws`;
  if (!group.statement) return { ok: false, line: `FAILED  ${name}: no signed statement beside ${presentFiles(group).join(', ')}` };
  const signature = await checkSignature(await fs.readFile(group.statement, 'utf8'), jwks);
  if (!signature.ok) return { ok: false, line: `FAILED  ${name}: ${signature.detail}` };
  const bytes: Partial<Record<ReportFormat, Uint8Array>> = {};
  for (const [format, file] of Object.entries(group.files) as [ReportFormat, string | null][]) if (file) bytes[format] = await fs.readFile(file);
  const checks = checkFiles(signature.payload, bytes);
  const problems = checks.flatMap((c) => {
    const file = `${group.base}.${c.format}`;
    if (c.status === 'differs') return [`${file} differs from the signed report (sha256 ${c.actual}, signed ${c.signed})`];
    if (c.status === 'missing' && group.required.includes(c.format)) return [`${file} is missing`];
    return [];
  });
  const p = signature.payload;
  const what = `${p.streamId}, snapshot ${p.snapshotId} (as of ${p.asOf}), verdict ${p.verdict}, key ${signature.kid}`;
  if (problems.length > 0) return { ok: false, line: `FAILED  ${name}: ${problems.join('; ')}` };
  const named = (status: string) => checks.filter((c) => c.status === status).map((c) => path.basename(`${group.base}.${c.format}`));
  const [matched, absent] = [named('ok'), named('missing')];
  if (matched.length === 0) return { ok: false, line: `FAILED  ${name}: no report file beside it to check` };
  const unchecked = absent.length > 0 ? ` (not found, not checked: ${absent.join(', ')})` : '';
  return { ok: true, line: `ok      ${name}: ${what}; ${matched.join(', ')} match${matched.length === 1 ? 'es' : ''}${unchecked}` };
}

function presentFiles(group: StatementGroup): string[] {
  return Object.values(group.files).filter((f): f is string => f !== null);
}
