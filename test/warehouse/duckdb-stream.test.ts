// A streamed result left before its end releases the Parquet files its readers hold: DuckDB keeps
// a pending streamed query (and its open files) until the connection runs another statement, so
// neither closing the connection nor collecting the result frees them (issue 16: an abandoned
// Arrow export kept a raw file open for tens of seconds). Descriptors read from /proc/self/fd.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Db } from '../../warehouse/duckdb/db.ts';
import { fileList } from '../../warehouse/duckdb/sql-text.ts';

let dir: string;
let db: Db;
let files: string[];

async function openOnFiles(): Promise<number> {
  let n = 0;
  for (const fd of await fs.readdir('/proc/self/fd')) {
    const target = await fs.readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target.startsWith(dir) && target.endsWith('.parquet')) n++;
  }
  return n;
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'p2ptel-stream-'));
  db = await Db.open({ threads: 1, memoryLimit: '128MB', maxConcurrent: 2 }, path.join(dir, 'spill'));
  files = [0, 1, 2].map((k) => path.join(dir, `part-${k}.parquet`));
  await db.withSession(async (s) => {
    for (const f of files) await s.run(`COPY (SELECT i, md5(i::VARCHAR) AS h FROM range(300000) t(i)) TO '${f}' (FORMAT parquet)`);
  });
});

afterAll(async () => {
  db?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('DbSession.chunks', () => {
  // No ORDER BY: the scan streams, so a reader is open while the caller holds the first chunk.
  const sql = () => `SELECT * FROM read_parquet(${fileList(files)}) WHERE i >= $lo`;

  it.each(['returned', 'interrupted', 'closed while suspended'] as const)('a stream %s before its end leaves no file open', async (how) => {
    const ac = new AbortController();
    const s = await db.session({ signal: ac.signal });
    const stream = s.chunks(sql(), { lo: 1 });
    expect((await stream.next()).done).toBe(false);
    expect(await openOnFiles()).toBeGreaterThan(0); // what the test would miss if the scan had ended
    if (how === 'returned') await stream.return(undefined);
    if (how === 'interrupted') {
      ac.abort(new Error('client left'));
      await expect(stream.next()).rejects.toThrow('client left');
    }
    s.close();
    // Within a short wait (close ends the stream asynchronously), not at the next GC.
    for (let i = 0; i < 20 && (await openOnFiles()) > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await openOnFiles()).toBe(0);
  });

  it('a stream read to its end returns every row', async () => {
    const rows = await db.withSession(async (s) => {
      let n = 0;
      for await (const chunk of s.chunks(sql(), { lo: 0 })) n += chunk.rowCount;
      return n;
    });
    expect(rows).toBe(3 * 300000);
    expect(await openOnFiles()).toBe(0);
  });
});
