// Running the real `p2ptel` command in a child process.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../lib/version.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function cli(args: string[], env: Record<string, string> = {}, cwd = PROJECT_ROOT): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), ...args],
      { cwd, env: { ...process.env, ...env }, timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
