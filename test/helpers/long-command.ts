// A long-running `p2ptel` command (serve, start) in a child process: started, and awaited until its
// output (stdout and stderr together) matches what says it is ready.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../lib/version.ts';

export interface LongCommand {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
}

/** Start a long-running command, wait for `ready` on its stdout or stderr; returns the child and output. */
export async function startLong(args: string[], ready: RegExp, env: Record<string, string> = {}): Promise<LongCommand> {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  let out = '';
  const onData = (d: Buffer) => (out += d.toString());
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (ready.test(out)) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
    child.on('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`exited ${code}: ${out}`));
    });
  });
  return { child, output: () => out };
}
