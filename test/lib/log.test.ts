// Service logs (lib/log.ts, lib/log-destination.ts): the request line written without pino is the
// line pino writes for the same fields; lines reach the descriptor whole and in order; a level
// above info writes no request line; a descriptor that does not keep up costs dropped lines that
// are counted in the log, never unbounded memory.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BatchedDestination } from '../../lib/log-destination.ts';
import { bufferedLogger, requestLineWriter, type RequestLine } from '../../lib/log.ts';

let dir: string;
let file: string;
let fd: number;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'p2ptel-log-'));
  file = path.join(dir, 'stderr.log');
  fd = fs.openSync(file, 'w');
});

afterEach(() => {
  fs.closeSync(fd);
  fs.rmSync(dir, { recursive: true, force: true });
});

const flushed = (d: BatchedDestination) => new Promise<void>((resolve) => d.flush(() => resolve()));
const readLines = () =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the request line', () => {
  const cases: RequestLine[] = [
    { reqId: 'a1b2', method: 'GET', path: '/telemetry/metrics/acme:live', status: 200, ms: 0.4, role: 'tenant', customerId: 'acme' },
    { reqId: 'op-7', method: 'POST', path: '/v1/session-reports', status: 202, ms: 12, role: 'operator', customerId: undefined },
    // Characters JSON must escape, and text beyond ASCII.
    { reqId: 'x', method: 'GET', path: '/a"b\\c/\u0001/é/😀', status: 404, ms: 1.5, role: undefined, customerId: undefined },
  ];

  it('is, field for field and in the same order, what pino writes for the same fields', async () => {
    const d = new BatchedDestination({ fd });
    const log = bufferedLogger('info', 'p2ptel-test', d);
    const write = requestLineWriter(log);
    for (const c of cases) {
      write(c);
      log.info(c, 'request');
    }
    await flushed(d);
    d.end();
    const text = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    expect(text).toHaveLength(cases.length * 2);
    for (let i = 0; i < cases.length; i++) {
      const fast = JSON.parse(text[2 * i]!) as Record<string, unknown>;
      const viaPino = JSON.parse(text[2 * i + 1]!) as Record<string, unknown>;
      expect(Object.keys(fast)).toEqual(Object.keys(viaPino));
      expect({ ...fast, time: 0 }).toEqual({ ...viaPino, time: 0 });
      expect(Math.abs((fast['time'] as number) - (viaPino['time'] as number))).toBeLessThan(5_000);
      // The fields, checked against the case itself rather than pino alone.
      expect(fast).toMatchObject({ level: 30, pid: process.pid, name: 'p2ptel-test', msg: 'request', path: cases[i]!.path, status: cases[i]!.status });
    }
  });

  it('is not written when the level is above info, and is once the level comes back', async () => {
    const d = new BatchedDestination({ fd });
    const log = bufferedLogger('warn', 'p2ptel-test', d);
    const write = requestLineWriter(log);
    write(cases[0]!);
    log.level = 'info';
    write(cases[1]!);
    await flushed(d);
    d.end();
    expect(readLines().map((l) => l['reqId'])).toEqual(['op-7']);
  });
});

describe('the batching destination', () => {
  it('writes every line whole and in order, in batches, and flushes on demand and at the end', async () => {
    const d = new BatchedDestination({ fd, chunkChars: 1000 });
    const n = 2_000;
    for (let i = 0; i < n; i++) {
      d.write(`${JSON.stringify({ i, pad: 'x'.repeat(i % 50) })}\n`);
      if (i % 300 === 0) await new Promise((r) => setImmediate(r));
    }
    await flushed(d);
    expect(readLines().map((l) => l['i'])).toEqual(Array.from({ length: n }, (_, i) => i));
    d.write('{"i":"last"}\n');
    d.end(); // synchronous: the line is in the file when end returns
    expect(readLines().at(-1)).toEqual({ i: 'last' });
  });

  it('drops lines beyond its bound while the descriptor lags, and says how many', async () => {
    // At most 3 batches of 100 characters wait: a burst of 100 lines without a turn of the event
    // loop (no write can complete) keeps a few and drops the rest.
    const d = new BatchedDestination({ fd, chunkChars: 100, maxBufferedBytes: 300 });
    const n = 100;
    for (let i = 0; i < n; i++) d.write(`${JSON.stringify({ i, pad: 'x'.repeat(40) })}\n`);
    await flushed(d);
    d.end();
    const lines = readLines();
    const kept = lines.filter((l) => typeof l['i'] === 'number').map((l) => l['i']);
    const note = lines.find((l) => typeof l['msg'] === 'string' && (l['msg'] as string).startsWith('log lines dropped: '));
    expect(note).toBeDefined();
    const dropped = Number(/dropped: (\d+)/.exec(note!['msg'] as string)![1]);
    expect(kept.length).toBeLessThanOrEqual(3 * 2);
    expect(kept.length + dropped).toBe(n);
    // The lines kept are the first ones, in order.
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => i));
  });
});
