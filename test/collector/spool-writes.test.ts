// The spool's group commit writes the waiting batches as they are, in one writev (no copy of them
// joined): what is on disk is every acknowledged batch, whole, once and in order; and a short
// write (libuv already loops over more buffers than IOV_MAX, so it takes a full disk or a signal)
// resumes exactly where it stopped.
import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterWritten, Spool } from '../../collector/spool.ts';
import { silentLogger } from '../../lib/log.ts';

const dir = path.join(os.tmpdir(), `spool-writes-${process.pid}`);
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

describe('spool writes', () => {
  it('resumes a short write at the byte where it stopped', () => {
    const bufs = ['abc', 'de', 'fghi'].map((s) => Buffer.from(s));
    const text = (xs: Buffer[]) => xs.map((b) => b.toString()).join('|');
    expect(text(afterWritten(bufs, 0))).toBe('abc|de|fghi');
    expect(text(afterWritten(bufs, 2))).toBe('c|de|fghi');
    expect(text(afterWritten(bufs, 3))).toBe('de|fghi');
    expect(text(afterWritten(bufs, 4))).toBe('e|fghi');
    expect(text(afterWritten(bufs, 8))).toBe('i');
    expect(afterWritten(bufs, 9)).toEqual([]);
  });

  it('holds every batch appended at once, each whole and once, in order', async () => {
    const spool = await Spool.open(dir, silentLogger);
    // 1 500 batches in flight: all but the first wait for the same group commit (more buffers
    // than IOV_MAX, 1 024).
    const batches = Array.from({ length: 1500 }, (_, i) => Array.from({ length: 1 + (i % 4) }, (_, k) => `{"batch":${i},"line":${k},"pad":"${'x'.repeat(i % 97)}"}\n`).join(''));
    await Promise.all(batches.map((b, i) => spool.append(Buffer.from(b), 1 + (i % 4))));
    const segment = (await spool.seal())!;
    await spool.close();
    const text = await fs.readFile(segment.file, 'utf8');
    expect(segment.bytes).toBe(Buffer.byteLength(batches.join('')));
    expect(text.length).toBe(segment.bytes);
    // Batches went out in the order they were appended.
    expect(text).toBe(batches.join(''));
    expect(segment.reports).toBe(batches.reduce((n, _, i) => n + 1 + (i % 4), 0));
  });

  it('forgets a landed segment once its file is gone, even when the folder cannot be synced after', async () => {
    const own = path.join(dir, 'remove');
    const spool = await Spool.open(own, silentLogger);
    await spool.append(Buffer.from('{"a":1}\n'), 1);
    const first = (await spool.seal())!;
    await spool.append(Buffer.from('{"a":2}\n'), 1);
    const second = (await spool.seal())!;
    expect(spool.sealed()).toEqual([first, second]);
    // The folder's fsync fails (here: the folder is gone, as a descriptor limit makes an open of
    // it fail): the removal is reported, and the segment is forgotten all the same, so that the
    // next landing starts at the second one rather than at a segment without a file.
    await fs.rm(first.file);
    const moved = `${own}-moved`;
    await fs.rename(own, moved);
    await expect(spool.remove(first)).rejects.toThrow();
    expect(spool.sealed()).toEqual([second]);
    await fs.rename(moved, own);
    await spool.remove(second);
    expect(spool.sealed()).toEqual([]);
    await spool.close();
  });
});
