// How a test starts one of test/fixtures/*.ts as a child process: the build of the test run
// (fixture-<name>.js in P2PTEL_BUILD, test/setup/build.ts), or through tsx when there is none (a
// file run outside `vitest run`'s global setup).
import { spawn } from 'node:child_process';
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

/**
 * Run test/fixtures/rollup-then-hang.ts on the warehouse at `root` up to `stage` (it prints READY
 * there and hangs), then SIGKILL it; resolves once it is dead. The crash tests' one way to leave a
 * run killed mid-way.
 */
export async function killRollupAt(root: string, stage: 'partitions' | 'swap', asOf: Date): Promise<void> {
  const child = spawn(process.execPath, fixtureArgv('rollup-then-hang.ts', root, asOf.toISOString(), stage), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('READY')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`fixture exited (${code}) before READY: ${stderr}`)));
  });
  const exited = new Promise((r) => child.on('exit', r));
  child.kill('SIGKILL');
  await exited;
}
