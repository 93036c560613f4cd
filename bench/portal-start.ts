// What the portal benchmarks share: `p2ptel start` on a warehouse in a process of its own (its
// output kept, to read its URLs, token and ingest key), and a browser-like sign-in to the portal.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/version.ts';

export interface StartedStart {
  child: ChildProcess;
  url: string;
  collector: string;
  token: string;
  key: string;
  output: () => string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `p2ptel start --warehouse dir` on free ports, once its first snapshot is published. With
 * `memorySamples`, the child samples its own memory into that file (bench/memory-sampler.cjs).
 */
export async function startStart(dir: string, memorySamples?: string): Promise<StartedStart> {
  const env = { ...process.env, LOG_LEVEL: 'warn', ...(memorySamples ? { MEMORY_SAMPLES: memorySamples } : {}) };
  const nodeFlags = memorySamples ? ['--require', path.join(PROJECT_ROOT, 'bench', 'memory-sampler.cjs')] : [];
  const child = spawn(process.execPath, [...nodeFlags, 'bin/p2ptel.js', 'start', '--warehouse', dir, '--port', '0', '--collector-port', '0'], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  process.once('exit', () => child.kill());
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  for (let i = 0; !/session-reports"\n/.test(out); i++) {
    if (child.exitCode !== null || i > 6000) throw new Error(`start did not come up:\n${out}`);
    await sleep(100);
  }
  const lines = out.split('\n');
  const after = (re: RegExp) => lines[lines.findIndex((l) => re.test(l)) + 1]!.trim();
  return { child, url: /API listening on (\S+)/.exec(out)![1]!, collector: /collector of SDK reports listening on (\S+);/.exec(out)![1]!, token: after(/its token, valid/), key: after(/ingest key of \S+ \(public, write-only/), output: () => out };
}

/** Sign in to the portal with a token as the sign-in form does; the session cookie to send. */
export async function signIn(base: string, token: string): Promise<string> {
  const form = await fetch(`${base}/portal/login`);
  const csrf = /p2ptel_portal_login=([^;]+)/.exec(form.headers.get('set-cookie') ?? '')![1]!;
  const res = await fetch(`${base}/portal/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: base, Cookie: `p2ptel_portal_login=${csrf}` },
    body: `csrf=${encodeURIComponent(csrf)}&token=${encodeURIComponent(token)}`,
  });
  return `p2ptel_portal=${/p2ptel_portal=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]!}`;
}
