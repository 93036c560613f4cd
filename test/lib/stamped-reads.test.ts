// StampedReads (lib/stamped-reads.ts): a value is read again only when its file's stamp changed,
// `keepOnly` drops what is kept of the other files (read again at their next use), and `remember`
// keeps what was just written without reading it, until the file changes again.
import { afterAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StampedReads } from '../../lib/stamped-reads.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stamped-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('StampedReads', () => {
  it('reads a file again when it changed, and drops the files keepOnly does not keep', () => {
    const a = path.join(dir, 'a.json');
    const b = path.join(dir, 'b.json');
    fs.writeFileSync(a, '1');
    fs.writeFileSync(b, '2');
    const reads: string[] = [];
    const read = (file: string) => {
      reads.push(path.basename(file));
      return Number(fs.readFileSync(file, 'utf8'));
    };
    const kept = new StampedReads<number>();
    expect([kept.readSync(a, read), kept.readSync(b, read), kept.readSync(a, read), kept.readSync(b, read)]).toEqual([1, 2, 1, 2]);
    expect(reads).toEqual(['a.json', 'b.json']);
    fs.writeFileSync(a, '10');
    expect(kept.readSync(a, read)).toBe(10);
    expect(reads).toEqual(['a.json', 'b.json', 'a.json']);
    kept.keepOnly((file) => file === a);
    expect([kept.readSync(a, read), kept.readSync(b, read)]).toEqual([10, 2]);
    expect(reads).toEqual(['a.json', 'b.json', 'a.json', 'b.json']);
  });

  it('keeps a value remembered as written until the file changes', async () => {
    const c = path.join(dir, 'c.json');
    const reads: string[] = [];
    const read = async (file: string) => {
      reads.push(path.basename(file));
      return Number(fs.readFileSync(file, 'utf8'));
    };
    const kept = new StampedReads<number>();
    fs.writeFileSync(c, '3');
    await kept.remember(c, 3);
    expect(await kept.read(c, read)).toBe(3);
    expect(reads).toEqual([]);
    fs.writeFileSync(c, '40');
    expect(await kept.read(c, read)).toBe(40);
    expect(reads).toEqual(['c.json']);
  });
});
