// Which statements and report files a path names, for `p2ptel verify-report`: a report file and its
// siblings `<name>.json|md|html|jws`, or every statement (and unsigned report) under a folder.
import fs from 'node:fs/promises';
import path from 'node:path';
import { REPORT_FORMATS, type ReportFormat } from './report-formats.ts';
import { InternalError } from '../lib/errors.ts';

/** A statement and the report files beside it (null: no such file). */
export interface StatementGroup {
  /** `<dir>/<name>`, without extension. */
  base: string;
  statement: string | null;
  files: Record<ReportFormat, string | null>;
  /** Formats whose file must be there (a file named on the command line; each of the three in a folder). */
  required: ReportFormat[];
}

export class StatementInputError extends InternalError {
  override name = 'StatementInputError';
  override readonly errorCode = 'statement_input_invalid';
}

const FORMAT_OF: ReadonlyMap<string, ReportFormat | 'jws'> = new Map([
  ['.json', 'json'],
  ['.md', 'md'],
  ['.html', 'html'],
  ['.jws', 'jws'],
]);

async function present(file: string): Promise<string | null> {
  return (await fs.stat(file).then((s) => s.isFile(), () => false)) ? file : null;
}

async function groupOf(base: string, required: ReportFormat[]): Promise<StatementGroup> {
  const files = {} as Record<ReportFormat, string | null>;
  for (const f of REPORT_FORMATS) files[f] = await present(`${base}.${f}`);
  return { base, statement: await present(`${base}.jws`), files, required };
}

/** The groups `target` names; a StatementInputError when it is neither a report file nor a folder holding one. */
export async function statementGroups(target: string): Promise<StatementGroup[]> {
  const stat = await fs.stat(target).catch(() => null);
  if (!stat) throw new StatementInputError(`${target}: no such file or folder`);
  if (stat.isDirectory()) return folderGroups(target);
  const format = FORMAT_OF.get(path.extname(target).toLowerCase());
  if (!format) throw new StatementInputError(`${target}: not a report (.json, .md, .html) nor a statement (.jws)`);
  const base = target.slice(0, -path.extname(target).length);
  return [await groupOf(base, format === 'jws' ? [] : [format])];
}

/**
 * Every statement under `dir`, each requiring its three files; and every unsigned report: two or
 * more of `<name>.json|md|html` side by side without a `<name>.jws` (an index page or reports.json
 * alone is not a report).
 */
async function folderGroups(dir: string): Promise<StatementGroup[]> {
  const names = (await fs.readdir(dir, { recursive: true })).map((n) => path.join(dir, n)).sort();
  const byBase = new Map<string, Set<string>>();
  for (const file of names) {
    const format = FORMAT_OF.get(path.extname(file).toLowerCase());
    if (!format) continue;
    const base = file.slice(0, -path.extname(file).length);
    byBase.set(base, (byBase.get(base) ?? new Set()).add(format));
  }
  const groups: StatementGroup[] = [];
  for (const [base, formats] of byBase) {
    if (formats.has('jws') || formats.size >= 2) groups.push(await groupOf(base, [...REPORT_FORMATS]));
  }
  if (groups.length === 0) throw new StatementInputError(`${dir}: no pilot report nor statement (.jws) in this folder`);
  return groups;
}
