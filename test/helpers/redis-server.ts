// A private, throwaway redis-server for tests and benchmarks: a free port on loopback, a temporary
// folder, no persistence, noeviction (BullMQ needs it). It never touches a Redis the user runs.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const REDIS_MISSING_MESSAGE =
  'redis-server was not found on PATH: the job tests and benchmarks start their own Redis. ' +
  'Install it (Debian/Ubuntu: apt-get install -y redis-server; macOS: brew install redis) and run again.';

export interface RedisServer {
  url: string;
  port: number;
  /** Stop the server (SIGTERM) and start it again on the same port and folder. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface RedisOptions {
  /** Persist with the append-only file (what docs/jobs.md recommends); default: no persistence. */
  appendonly?: boolean;
}

export function redisServerInstalled(): boolean {
  const r = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return r.error === undefined && r.status === 0;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves once the server prints that it accepts connections; rejects if it exits first. */
function whenReady(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server not ready after ${timeoutMs} ms: ${out.slice(-500)}`)), timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}) before it was ready: ${out.slice(-500)}`));
    });
  });
}

/** Start a redis-server of our own; throws REDIS_MISSING_MESSAGE when the binary is missing. */
export async function startRedisServer(opts: RedisOptions = {}): Promise<RedisServer> {
  if (!redisServerInstalled()) throw new Error(REDIS_MISSING_MESSAGE);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'p2ptel-redis-'));
  const spawnOn = (port: number): ChildProcess =>
    spawn(
      'redis-server',
      [
        '--port', String(port),
        '--bind', '127.0.0.1',
        '--dir', dir,
        '--save', '',
        '--appendonly', opts.appendonly ? 'yes' : 'no',
        '--appendfsync', 'everysec',
        '--maxmemory-policy', 'noeviction',
        '--daemonize', 'no',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
  const stopChild = async (child: ChildProcess): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  // A port found free can be taken before redis binds it: try a few.
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    let child = spawnOn(port);
    try {
      await whenReady(child, 10_000);
    } catch (err) {
      child.kill('SIGKILL');
      if (attempt < 4) continue;
      await fs.rm(dir, { recursive: true, force: true });
      throw err;
    }
    child.stdout?.resume();
    child.stderr?.resume();
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      async restart() {
        await stopChild(child);
        child = spawnOn(port);
        await whenReady(child, 10_000);
        child.stdout?.resume();
        child.stderr?.resume();
      },
      async stop() {
        await stopChild(child);
        await fs.rm(dir, { recursive: true, force: true });
      },
    };
  }
}
