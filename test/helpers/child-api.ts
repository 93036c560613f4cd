// An API server in a child process (`p2ptel serve`), so that a test can read its resident memory
// and open descriptors from /proc, and requests over fresh connections (no keep-alive sockets
// left open in the server by the test's own client).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { PROJECT_ROOT } from '../../lib/version.ts';

export interface ChildApi {
  child: ChildProcess;
  url: string;
  pid: number;
  stderr: () => string;
  stop(): Promise<void>;
}

export async function startChildApi(warehouse: string, env: Record<string, string> = {}): Promise<ChildApi> {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'serve', '--warehouse', warehouse, '--port', '0'], {
    env: { ...process.env, DUCKDB_MEMORY_LIMIT: '256MB', DUCKDB_THREADS: '1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /API listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${err}`)));
  });
  return {
    child,
    url,
    pid: child.pid!,
    stderr: () => err,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function rssKb(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
}

/** Open descriptors of a process, from /proc/<pid>/fd. */
export async function fdCount(pid: number): Promise<number> {
  return (await fs.readdir(`/proc/${pid}/fd`)).length;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request on a connection of its own (closed after), the body read whole. */
export function rawRequest(url: string, init: { method?: string; headers?: Record<string, string | string[]>; body?: string } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/**
 * A download the client abandons: the response starts, `afterBytes` are read, then the socket is
 * destroyed. Resolves with the status and the bytes read.
 */
export function cancelledDownload(url: string, headers: Record<string, string>, afterBytes = 1): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (d: Buffer) => {
        bytes += d.length;
        if (bytes >= afterBytes) {
          req.destroy();
          resolve({ status: res.statusCode!, bytes });
        }
      });
      res.on('end', () => resolve({ status: res.statusCode!, bytes }));
      res.on('error', () => {});
    });
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
  });
}

/**
 * A request the client abandons before the response headers arrive: the socket is destroyed
 * `afterMs` after the request was sent. Resolves with whether a response had started by then.
 */
export function abandonedRequest(url: string, headers: Record<string, string>, afterMs: number): Promise<{ responded: boolean }> {
  return new Promise((resolve, reject) => {
    let responded = false;
    const req = http.get(url, { headers, agent: false }, (res) => {
      responded = true;
      res.on('error', () => {});
      res.resume();
    });
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
    setTimeout(() => {
      req.destroy();
      resolve({ responded });
    }, afterMs);
  });
}

/**
 * A download held open: the headers arrive, nothing more is read until `cancel()` destroys the
 * connection (as a client that stalls, then leaves).
 */
export function heldDownload(url: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; cancel: () => void; body: () => Promise<Buffer> }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent: false }, (res) => {
      res.pause();
      resolve({
        status: res.statusCode!,
        headers: res.headers,
        cancel: () => req.destroy(),
        body: () =>
          new Promise((ok, ko) => {
            const parts: Buffer[] = [];
            res.on('data', (d: Buffer) => parts.push(d));
            res.on('end', () => ok(Buffer.concat(parts)));
            res.on('error', ko);
            res.resume();
          }),
      });
    });
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
  });
}

/** Poll `fn` until it returns true or `ms` pass; returns its last answer. */
export async function eventually(fn: () => Promise<boolean>, ms = 10_000, every = 100): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, every));
  }
}
