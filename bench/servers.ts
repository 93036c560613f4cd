// What the HTTP benchmarks share: starting a server in its own process (its output to a file, so
// that this process spends its CPU on the load alone) and measuring it with autocannon.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import autocannon from 'autocannon';
import { PROJECT_ROOT } from '../lib/version.ts';

export interface ChildServer {
  child: ChildProcess;
  url: string;
}

/** Node flags that write a CPU profile of a server under test into `dir` (when it exits cleanly). */
export function cpuProfileFlags(dir: string | undefined): string[] {
  return dir ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(dir)] : [];
}

/**
 * Start `node [NODE FLAGS] ARGS...` in the project folder and wait for `ready` (its group 1: the
 * URL) in its output.
 */
export async function startChild(logDir: string, args: string[], ready: RegExp, env: Record<string, string> = {}, nodeFlags: string[] = []): Promise<ChildServer> {
  const logFile = path.join(logDir, `${path.basename(args[args.length > 2 ? 1 : 0]!)}-${Date.now()}.log`);
  const fd = await fs.open(logFile, 'w');
  const child = spawn(process.execPath, [...nodeFlags, ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', fd.fd, fd.fd] });
  await fd.close();
  // A benchmark that fails half-way must not leave its servers running (and loading the machine).
  process.once('exit', () => child.kill());
  for (let i = 0; i < 300; i++) {
    const m = ready.exec(await fs.readFile(logFile, 'utf8'));
    if (m) return { child, url: m[1]! };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not start: ${await fs.readFile(logFile, 'utf8')}`);
}

/** SIGTERM a server and wait for it to exit (so that its CPU profile, if any, is written). */
export async function stopChild(server: ChildServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  await exited;
}

export interface LoadResult {
  rps: number;
  p99: number;
  non2xx: number;
  /** Requests answered during the load. */
  requests: number;
}

export async function load(url: string, opts: { connections: number; duration: number; token?: string }): Promise<LoadResult> {
  const r = await autocannon({
    url,
    connections: opts.connections,
    duration: opts.duration,
    ...(opts.token ? { headers: { Authorization: `Bearer ${opts.token}` } } : {}),
  });
  return { rps: r.requests.average, p99: r.latency.p99, non2xx: r.non2xx, requests: r.requests.total };
}

/** The median req/s and p99 of several measurements. */
export function loadStats(xs: LoadResult[], median: (v: number[]) => number): { rps: number; p99: number } {
  return { rps: median(xs.map((x) => x.rps)), p99: median(xs.map((x) => x.p99)) };
}
