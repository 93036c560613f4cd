// The catalogue of internal errors and exit codes (lib/error-catalogue.ts): every error class of the
// source tree is in it, the classes take their code from it, the CLI's exit codes are those it has
// always had, and docs/jobs.md holds the tables written from it.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EXIT_CODES, INTERNAL_ERRORS, type ErrorCode } from '../../lib/error-catalogue.ts';
import { ERROR_DOCS, withErrorTables } from '../../lib/error-docs.ts';
import { exitCodeOf, ExitError, InternalError } from '../../lib/errors.ts';
import { PROJECT_ROOT } from '../../lib/version.ts';

/** Modules whose classes are listed but are changed elsewhere: they do not extend InternalError yet. */
const NOT_YET = ['alerts/', 'portal/'];
/** The HTTP problem itself: lib/http/problem.ts is the catalogue of those. */
const PROBLEM_CLASSES = ['ApiError'];

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.') || ['node_modules', 'dist', 'test', 'bench'].includes(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sourceFiles(p)));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Every exported class of the source tree that extends Error, or a class that does, by name: its module. */
async function errorClasses(): Promise<Map<string, string>> {
  const extendsOf = new Map<string, { base: string; module: string }>();
  for (const file of await sourceFiles(PROJECT_ROOT)) {
    const text = await fs.readFile(file, 'utf8');
    for (const m of text.matchAll(/^export (?:abstract )?class (\w+) extends (\w+)/gm)) {
      extendsOf.set(m[1]!, { base: m[2]!, module: path.relative(PROJECT_ROOT, file).split(path.sep).join('/') });
    }
  }
  const isError = (name: string): boolean => name === 'Error' || (extendsOf.has(name) && isError(extendsOf.get(name)!.base));
  const found = new Map<string, string>();
  for (const [name, { module }] of extendsOf) if (isError(name) && name !== 'InternalError') found.set(name, module);
  return found;
}

const entries = Object.entries(INTERNAL_ERRORS) as [ErrorCode, (typeof INTERNAL_ERRORS)[ErrorCode]][];

describe('the catalogue of internal errors', () => {
  it('lists every error class of the source tree, with its module, once', async () => {
    const found = await errorClasses();
    for (const name of PROBLEM_CLASSES) found.delete(name);
    const listed = new Map(entries.map(([, e]) => [e.class as string, e.module as string]));
    expect(listed.size).toBe(entries.length);
    expect(Object.fromEntries([...listed].sort())).toEqual(Object.fromEntries([...found].sort()));
  });

  it('gives each class its code; a command ending on one exits as it always has', async () => {
    // Hand-written, as the CLI exited before the catalogue: usage errors 2, the run lock 4, others 1.
    const expectedExit: Partial<Record<string, number>> = { UserError: 2, ConfigError: 2, AsOfAheadError: 2, RunAlreadyRunningError: 4 };
    let checked = 0;
    for (const [code, entry] of entries) {
      if (NOT_YET.some((p) => entry.module.startsWith(p)) || entry.class === 'ExitError') continue;
      const mod = (await import(path.join(PROJECT_ROOT, entry.module))) as Record<string, new (arg: unknown) => Error>;
      const err = new mod[entry.class]!(new Date(0));
      expect(err, entry.class).toBeInstanceOf(InternalError);
      expect((err as InternalError).errorCode, entry.class).toBe(code);
      expect(err.name).toBe(entry.class);
      expect(exitCodeOf(err), entry.class).toBe(expectedExit[entry.class] ?? 1);
      checked++;
    }
    expect(checked).toBe(entries.length - 5);
    expect(exitCodeOf(new ExitError('x', 6))).toBe(6);
    expect(exitCodeOf(z.number().safeParse('x').error)).toBe(2);
    expect(exitCodeOf(new Error('x'))).toBe(1);
    expect(exitCodeOf('a string')).toBe(1);
  });

  it('numbers the exit codes 0 to 7 as the CLI always has', () => {
    expect(Object.fromEntries(Object.entries(EXIT_CODES).map(([k, v]) => [k, v.code]))).toEqual({
      done: 0,
      failed: 1,
      usage: 2,
      blockedByFutureSnapshot: 3,
      alreadyRunning: 4,
      partlyFailed: 5,
      nothingPublished: 6,
      verificationFailed: 7,
    });
  });
});

describe('docs of the exit codes and internal errors', () => {
  it('docs/jobs.md holds the tables written from the catalogue (npm run docs:errors)', async () => {
    for (const file of ERROR_DOCS) {
      const doc = await fs.readFile(file, 'utf8');
      expect(doc, `${file} lags the catalogue: npm run docs:errors`).toBe(withErrorTables(doc));
      expect(doc).toContain('<!-- /exit-codes -->');
      expect(doc).toContain('<!-- /internal-errors -->');
    }
    const jobs = await fs.readFile(ERROR_DOCS[0]!, 'utf8');
    for (const [code, e] of Object.entries(EXIT_CODES)) expect(jobs, code).toContain(`| ${e.code} | ${e.meaning} |`);
    for (const [code] of entries) expect(jobs).toContain(`| \`${code}\` |`);
  });
});
