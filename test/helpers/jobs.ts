// Helpers of the job tests: the private Redis of the test run, a queue prefix per test file, the
// environment of worker processes (short locks so that crash recovery takes seconds), and worker
// child processes whose JSON logs the tests can wait on.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { inject } from 'vitest';
import { loadConfig, type AppConfig } from '../../lib/config.ts';
import { silentLogger } from '../../lib/log.ts';
import { PROJECT_ROOT } from '../../lib/version.ts';
import { openQueues, type Queues } from '../../jobs/queue/client.ts';
import { fixtureArgv } from './fixtures.ts';
import { SHORT_COMMAND_FLAGS } from './cli.ts';

/** The URL of the test run's own redis-server; fails with how to install Redis when it is missing. */
export function testRedisUrl(): string {
  const url = inject('redisUrl');
  if (!url) throw new Error(inject('redisError') ?? 'no test Redis (is test/setup/redis.ts the globalSetup?)');
  return url;
}

/** A queue prefix of its own for each test file: files share one Redis without seeing each other. */
export function uniquePrefix(name: string): string {
  return `t-${name}-${randomBytes(3).toString('hex')}`;
}

/**
 * Environment of worker processes and CLI commands in the job tests: small DuckDB, info logs
 * (the tests read them), locks of 2 s checked every second, two attempts with a short backoff.
 */
export function jobEnv(warehouse: string, prefix: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    WAREHOUSE_DIR: warehouse,
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: prefix,
    DUCKDB_THREADS: '1',
    DUCKDB_MEMORY_LIMIT: '1GB',
    LOG_LEVEL: 'info',
    WORKER_LOCK_DURATION_MS: '2000',
    WORKER_STALLED_INTERVAL_MS: '1000',
    JOB_ATTEMPTS: '2',
    JOB_BACKOFF_MS: '200',
    WORKER_SHUTDOWN_GRACE_SECONDS: '10',
    ...extra,
  };
}

export function jobConfig(env: Record<string, string>): AppConfig {
  return loadConfig({ env });
}

/** Queues of the test process, to add and inspect jobs the way the CLI does. */
export function testQueues(env: Record<string, string>): Promise<Queues> {
  return openQueues(jobConfig(env).redis, 'command', silentLogger);
}

export interface LogLine {
  msg?: string;
  [key: string]: unknown;
}

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  logs: LogLine[];
  stdout(): string;
  /** Resolves with the first log line that matches (already seen or coming). */
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  waitForStdout(text: string, timeoutMs?: number): Promise<void>;
  /** Exit code (or signal name) and when it exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

const live = new Set<ChildProcess>();

/** Start `p2ptel worker` (or a fixture given as a .ts file under test/fixtures) in a child process. */
export function startWorker(env: Record<string, string>, opts: { fixture?: string; args?: string[] } = {}): WorkerProcess {
  const argv = opts.fixture
    ? fixtureArgv(opts.fixture, ...(opts.args ?? []))
    : [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'worker', ...(opts.args ?? [])];
  const child = spawn(process.execPath, [...SHORT_COMMAND_FLAGS, ...argv], { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const logs: LogLine[] = [];
  let out = '';
  let errTail = '';
  const listeners = new Set<() => void>();
  const notify = () => listeners.forEach((l) => l());
  let partial = '';
  child.stderr!.on('data', (d: Buffer) => {
    partial += d.toString();
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        errTail = `${errTail}${line}\n`.slice(-2000);
      }
    }
    notify();
  });
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    notify();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal, at: Date.now() });
      notify();
    });
  });
  const waitFor = <T>(check: () => T | undefined, what: string, timeoutMs: number): Promise<T> =>
    new Promise((resolve, reject) => {
      const test = () => {
        const hit = check();
        if (hit !== undefined) {
          cleanup();
          resolve(hit);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          cleanup();
          reject(new Error(`worker ${child.pid} exited before ${what}; stderr: ${errTail}${JSON.stringify(logs.slice(-5))}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out waiting for ${what}; stderr: ${errTail}${JSON.stringify(logs.slice(-5))}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(test);
      };
      listeners.add(test);
      test();
    });
  return {
    child,
    pid: child.pid!,
    logs,
    stdout: () => out,
    waitForLog: (pred, timeoutMs = 30_000) => waitFor(() => logs.find(pred), 'a log line', timeoutMs),
    waitForStdout: (text, timeoutMs = 30_000) => waitFor(() => (out.includes(text) ? true : undefined), `"${text}" on stdout`, timeoutMs).then(() => undefined),
    exited,
  };
}

/** A worker that has said it is ready. */
export async function readyWorker(env: Record<string, string>, opts: { fixture?: string; args?: string[] } = {}): Promise<WorkerProcess> {
  const w = startWorker(env, opts);
  await w.waitForLog((l) => l.msg === 'worker ready');
  return w;
}

/** SIGKILL every worker still running (afterAll: no test leaves processes behind). */
export async function killAllWorkers(): Promise<void> {
  const waits = [...live].map((c) => new Promise((r) => c.once('exit', r)));
  for (const c of live) c.kill('SIGKILL');
  await Promise.all(waits);
}
