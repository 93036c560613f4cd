// The docs' tables of exit codes and internal errors (docs/jobs.md), written from the catalogue
// (lib/error-catalogue.ts) between markers by `npm run docs:errors`; test/lib/error-catalogue.test.ts
// fails when the file lags.
import path from 'node:path';
import { PROJECT_ROOT } from './version.ts';
import { EXIT_CODES, INTERNAL_ERRORS, type ErrorEntry } from './error-catalogue.ts';

/** The files that hold the generated tables. */
export const ERROR_DOCS = ['docs/jobs.md'].map((f) => path.join(PROJECT_ROOT, f));

const TABLES: Record<string, () => string> = { 'exit-codes': exitCodesTable, 'internal-errors': internalErrorsTable };

/** `<!-- exit-codes: … -->` or `<!-- internal-errors: … -->`, the generated table, `<!-- /… -->`. */
const SECTION = /(<!-- (exit-codes|internal-errors):[^>]*-->\n)[\s\S]*?(<!-- \/\2 -->)/g;

/** A document with each of its generated tables written again. */
export function withErrorTables(doc: string): string {
  return doc.replace(SECTION, (_all, begin: string, name: string, end: string) => `${begin}${TABLES[name]!()}\n${end}`);
}

/** The CLI's exit codes: code, meaning, what to do. */
export function exitCodesTable(): string {
  const rows = Object.values(EXIT_CODES).map((e) => row([String(e.code), e.meaning, e.action]));
  return ['| code | meaning | what to do |', '|---|---|---|', ...rows].join('\n');
}

/** Every internal error: code, class, the exit code a command ends with, the HTTP problem, meaning. */
export function internalErrorsTable(): string {
  const rows = Object.entries(INTERNAL_ERRORS).map(([code, entry]) => {
    const e = entry as ErrorEntry;
    const exit = e.exit === 'carried' ? 'its own' : String(EXIT_CODES[e.exit].code);
    return row([`\`${code}\``, `\`${e.class}\` (${e.module})`, exit, e.problem ? `\`${e.problem}\`` : '', e.meaning]);
  });
  return ['| code | class | exit | HTTP problem | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

function row(cells: readonly string[]): string {
  return `|${cells.map((c) => (c === '' ? ' ' : ` ${c} `)).join('|')}|`;
}
