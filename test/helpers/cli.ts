// Running the real `p2ptel` command in a child process.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../lib/version.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * V8 flags of the short commands tests run: without its optimizing compiler (the same semantics),
 * a command that lives a fraction of a second spends about a third less CPU (`p2ptel runs`:
 * 0.41 → 0.28 s user + system), most of it compiling code it would leave before running again;
 * the suite starts over a hundred of them. The workers tests start (test/helpers/jobs.ts) live a
 * few seconds and run the same way (an idle one: 0.6–0.8 → 0.5 s); servers that stream exports
 * do not.
 */
export const SHORT_COMMAND_FLAGS = ['--no-opt'];

export function cli(args: string[], env: Record<string, string> = {}, cwd = PROJECT_ROOT): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...SHORT_COMMAND_FLAGS, path.join(PROJECT_ROOT, 'bin/p2ptel.js'), ...args],
      { cwd, env: { ...process.env, ...env }, timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/**
 * Several independent `cli` calls, `concurrency` processes at a time (much of a start is spent
 * waiting on files): the results in the order of `calls`, each with the time from its own start
 * to its exit.
 */
export async function cliAll(calls: [string[], Record<string, string>?][], concurrency = 4): Promise<(CliResult & { ms: number })[]> {
  const results: (CliResult & { ms: number })[] = new Array(calls.length);
  let next = 0;
  async function lane(): Promise<void> {
    while (next < calls.length) {
      const i = next++;
      const [args, env] = calls[i]!;
      const started = Date.now();
      const r = await cli(args, env);
      results[i] = { ...r, ms: Date.now() - started };
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, calls.length) }, lane));
  return results;
}
