// How a test starts one of test/fixtures/*.ts as a child process: the build of the test run
// (fixture-<name>.js in P2PTEL_BUILD, test/setup/build.ts), or through tsx when there is none (a
// file run outside `vitest run`'s global setup).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../lib/version.ts';

/** The arguments after `node` that run the fixture `file` (a name under test/fixtures, with .ts) with `args`. */
export function fixtureArgv(file: string, ...args: string[]): string[] {
  const build = process.env['P2PTEL_BUILD'];
  const compiled = build ? path.join(PROJECT_ROOT, build, `fixture-${file.replace(/\.ts$/, '')}.js`) : null;
  if (compiled !== null && existsSync(compiled)) return [compiled, ...args];
  return [path.join(PROJECT_ROOT, 'bin/run-ts.js'), path.join(PROJECT_ROOT, 'test/fixtures', file), ...args];
}
