// The batch workers (collector/batch-pool.ts): a batch checked by a worker thread has exactly the
// outcome of the same batch checked in process (spool lines byte for byte, rejections, problems),
// on good, mixed and bad batches; a worker that dies fails only the batches it held and is
// replaced. The route's answers for each outcome are tested end to end (bad-input, end-to-end).
import { gzipSync } from 'node:zlib';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { BatchPool } from '../../collector/batch-pool.ts';
import type { BatchOutcome, BatchRequest } from '../../collector/batch.ts';
import { silentLogger } from '../../lib/log.ts';
import { sampleReport } from '../helpers/collector.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const LIMITS = { maxInflatedBytes: 64 * 1024, maxReports: 50 };
const report = (i: number, over: Record<string, unknown> = {}) => ({ ...sampleReport('acme:live-main', new Date(NOW - 60_000 + i), i), ...over });
const json = (x: unknown) => Buffer.from(JSON.stringify(x));
const req = (over: Partial<BatchRequest> = {}): BatchRequest => ({
  gzip: false,
  ndjson: false,
  customerId: 'acme',
  window: { latestMs: NOW + 600_000, earliestMs: NOW - 35 * 86_400_000 },
  ...over,
});

const CASES: [string, Buffer, BatchRequest][] = [
  ['all valid, {"reports": [...]}', json({ reports: Array.from({ length: 20 }, (_, i) => report(i)) }), req()],
  ['all valid, gzip\'d array', gzipSync(json(Array.from({ length: 20 }, (_, i) => report(i)))), req({ gzip: true })],
  ['mixed', json([report(0), report(1, { bytesOffloaded: -1 }), report(2, { ts: '2027-01-01T00:00:00Z' }), report(3, { extra: 'dropped' })]), req()],
  ['NDJSON with a bad line', Buffer.from(`${JSON.stringify(report(0))}\n{oops\n\n${JSON.stringify(report(1))}\n`), req({ ndjson: true })],
  ['none valid', json([report(0, { streamId: 'nocolon' }), 5]), req()],
  ['foreign stream', json([report(0), report(1, { streamId: 'globex:live' })]), req()],
  ['not JSON', Buffer.from('{"reports": ['), req()],
  ['not gzip', Buffer.from('plain'), req({ gzip: true })],
  ['gzip bomb', gzipSync(Buffer.alloc(LIMITS.maxInflatedBytes + 1, 32)), req({ gzip: true })],
  ['too large as sent', Buffer.alloc(LIMITS.maxInflatedBytes + 1, 32), req()],
  ['too many reports', json(Array.from({ length: LIMITS.maxReports + 1 }, (_, i) => report(i))), req()],
  ['nested arrays, gzip\'d', gzipSync('['.repeat(30_000) + ']'.repeat(30_000)), req({ gzip: true })],
  ['nesting inside a report', Buffer.from(`[${JSON.stringify(report(0)).slice(0, -1)},"extra":${'['.repeat(20)}${']'.repeat(20)}}]`), req()],
  ['nesting in an NDJSON line', Buffer.from(`${JSON.stringify(report(0))}\n${'{"a":'.repeat(20)}1${'}'.repeat(20)}\n`), req({ ndjson: true })],
  ['nesting at the limit', Buffer.from(`{"reports":[${JSON.stringify(report(0)).slice(0, -1)},"extra":[[[[1]]]]}]}`), req()],
];

/**
 * For batches of 20,000 reports: a time limit far above what they take (tens of milliseconds), so
 * that a loaded machine does not answer `tooSlow` where these tests are about something else.
 */
const BIG_LIMITS = { maxInflatedBytes: 64 * 2 ** 20, maxReports: 20_000, maxCheckMs: 60_000 };

const workers = new BatchPool(2, LIMITS, silentLogger);
const inProcess = new BatchPool(0, LIMITS, silentLogger);

afterAll(async () => {
  await workers.close();
});

/** An outcome with its spool lines as text, to compare and read (its time left out: a timing). */
const readable = (o: BatchOutcome) => {
  const work = { inflatedBytes: o.work.inflatedBytes };
  return o.ok ? { ...o, lines: Buffer.from(o.lines).toString(), work } : { ...o, work };
};

describe('batch workers', () => {
  it('give every batch the outcome it gets in process', async () => {
    expect(workers.size).toBe(2);
    expect(inProcess.size).toBe(0);
    for (const [name, body, r] of CASES) {
      const [a, b] = await Promise.all([workers.check(body, r), inProcess.check(body, r)]);
      expect(readable(a), name).toEqual(readable(b));
    }
    // What the outcomes say, worked by hand for a few.
    const mixed = readable(await workers.check(CASES[2]![1], CASES[2]![2]));
    expect(mixed).toMatchObject({ ok: true, reports: 4, accepted: 2, rejected: [{ index: 1, field: 'bytesOffloaded' }, { index: 2, field: 'ts' }] });
    const lines = (mixed as { lines: string }).lines.trimEnd().split('\n').map((l) => JSON.parse(l) as { tsu: number; r: Record<string, unknown> });
    expect(lines.map((l) => [l.r['reportId'], l.tsu, 'extra' in l.r])).toEqual([
      [report(0)['reportId'], (NOW - 60_000) * 1000, false],
      [report(3)['reportId'], (NOW - 60_000 + 3) * 1000, false],
    ]);
    expect(readable(await workers.check(CASES[5]![1], CASES[5]![2]))).toEqual({ ok: false, reports: 2, problem: { code: 'foreignStream', index: 1 }, work: { inflatedBytes: CASES[5]![1].length } });
    expect(await workers.check(CASES[8]![1], CASES[8]![2])).toMatchObject({ ok: false, reports: null, problem: { code: 'tooLarge' } });
    expect(readable(await workers.check(CASES[10]![1], CASES[10]![2]))).toMatchObject({ ok: false, reports: null, problem: { code: 'tooManyReports', max: LIMITS.maxReports } });
    // Nesting past eight levels is refused before anything is parsed; eight is read.
    for (const i of [11, 12, 13]) expect(readable(await workers.check(CASES[i]![1], CASES[i]![2])), CASES[i]![0]).toMatchObject({ ok: false, reports: null, problem: { code: 'tooDeep', max: 8 } });
    expect(readable(await workers.check(CASES[14]![1], CASES[14]![2]))).toMatchObject({ ok: true, accepted: 1 });
  });

  it('write a batch\'s lines into memory the spool is done with, every byte of them', async () => {
    const pool = new BatchPool(2, BIG_LIMITS, silentLogger);
    try {
      await pool.started();
      const batch = (n: number, from: number) => json(Array.from({ length: n }, (_, i) => report(from + i, { region: `r-${from}` })));
      const lines = async (body: Buffer, by: BatchPool = pool) => {
        const o = await by.check(body, req());
        if (!o.ok) throw new Error('a batch was refused');
        return o.lines;
      };
      const local = new BatchPool(0, BIG_LIMITS, silentLogger);
      const expected = async (body: Buffer) => Buffer.from(await lines(body, local)).toString();
      // Small batches go to the first worker (both idle) and write into memory shared with this
      // thread: a slot held until recycled is not written again.
      const a = await lines(batch(3, 0));
      const aText = Buffer.from(a).toString();
      const b = await lines(batch(4, 100));
      expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(b.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(b.buffer).not.toBe(a.buffer);
      expect(Buffer.from(a).toString()).toBe(aText);
      expect(aText).toBe(await expected(batch(3, 0)));
      // Recycled, its slot takes the next batch's lines, exactly what the batch gives in process
      // though the slot held longer lines before.
      pool.recycle(a);
      pool.recycle(b);
      const c = await lines(batch(2, 200));
      expect([a.buffer, b.buffer]).toContain(c.buffer);
      expect(Buffer.from(c).toString()).toBe(await expected(batch(2, 200)));

      // A batch that finds all 16 slots held gets memory of its own, of its lines' size.
      const held = [c];
      for (let i = 0; i < 15; i++) held.push(await lines(batch(1, 300 + i)));
      expect(held.every((l) => l.buffer instanceof SharedArrayBuffer)).toBe(true);
      expect(new Set(held.map((l) => l.buffer)).size).toBe(16);
      const own = await lines(batch(2, 400));
      expect(own.buffer).toBeInstanceOf(ArrayBuffer);
      expect(own.buffer.byteLength).toBe(own.byteLength);
      expect(Buffer.from(own).toString()).toBe(await expected(batch(2, 400)));
      for (const l of held) pool.recycle(l);

      // Lines larger than a slot get memory of their own, moved here, and moved back once recycled.
      const big = await lines(batch(5000, 1000));
      const memory = big.buffer.byteLength;
      expect(big.buffer).toBeInstanceOf(ArrayBuffer);
      expect(memory).toBeGreaterThan(1024 * 1024);
      pool.recycle(big);
      expect(big.byteLength).toBe(0); // moved to a worker
      // The next batch too large for a slot is written into that memory (the same worker), every
      // byte of it what the batch gives in process.
      const again = await lines(batch(2000, 9000));
      expect(again.buffer.byteLength).toBe(memory);
      expect(Buffer.from(again).toString()).toBe(await expected(batch(2000, 9000)));
    } finally {
      await pool.close();
    }
  });

  it('replace a worker that dies, failing only the batches it held', async () => {
    const pool = new BatchPool(2, BIG_LIMITS, silentLogger);
    try {
      const slots = (pool as unknown as { slots: { worker: Worker }[] }).slots;
      const dying = slots[0]!.worker;
      // A batch that takes a worker tens of milliseconds, so that it is still held when the worker dies.
      const big = json(Array.from({ length: 20_000 }, (_, i) => report(i)));
      // Two batches: the first goes to the first worker (both idle), the second to the other one.
      const held = pool.check(big, req());
      const other = pool.check(big, req());
      await dying.terminate();
      await expect(held).rejects.toThrow(/exited/);
      const second = await other;
      expect(second, JSON.stringify(second.ok ? null : second.problem)).toMatchObject({ ok: true, accepted: 20_000 });
      await expect.poll(() => slots[0]!.worker !== dying).toBe(true);
      expect(await pool.check(CASES[0]![1], CASES[0]![2])).toMatchObject({ ok: true, accepted: 20 });
    } finally {
      await pool.close();
    }
  });
});
