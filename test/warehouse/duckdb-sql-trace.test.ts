// P2PTEL_SQL_TRACE=1 (docs/warehouse-state.md): every statement's time on stderr, and every
// statement that fails with its error, so that a run's failure (an out-of-memory error, say) names
// the statement; the error itself still reaches the caller.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';

let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse({ P2PTEL_SQL_TRACE: '1' });
});
afterAll(async () => {
  await wh?.close();
});

describe('the SQL trace', () => {
  it('prints a statement that ends, and one that fails with its error, which still throws', async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      await wh.db.withSession(async (s) => {
        expect(await s.one<{ n: number }>('SELECT 41 + 1 AS n')).toEqual({ n: 42 });
        await expect(s.run('SELECT * FROM no_such_table_here')).rejects.toThrow(/no_such_table_here/);
      });
    } finally {
      spy.mockRestore();
    }
    expect(lines.some((l) => /^sql \d+ ms {2}SELECT 41 \+ 1 AS n/.test(l))).toBe(true);
    expect(lines.some((l) => /^sql failed after \d+ ms \(.*no_such_table_here.*\) {2}SELECT \* FROM no_such_table_here/.test(l))).toBe(true);
  });
});

describe('the SQL trace of a statement out of memory', () => {
  it('says what holds the instance\'s memory and which statements and sessions are open', async () => {
    const small = await openTestWarehouse({ P2PTEL_SQL_TRACE: '1', DUCKDB_MEMORY_LIMIT: '64MB' });
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      await small.db.withSession(async (holder) => {
        await holder.run('CREATE TEMP TABLE held AS SELECT range AS n FROM range(3000000)');
        await small.db.withSession(async (s) => {
          await expect(s.run('SELECT list(range) FROM range(30000000)')).rejects.toThrow(/^Out of Memory Error/);
        });
      });
    } finally {
      spy.mockRestore();
      await small.close();
    }
    const text = lines.join('');
    expect(text).toMatch(/sql failed after \d+ ms \(Out of Memory Error.*\) {2}SELECT list\(range\)/);
    expect(text).toMatch(/ {2}memory \(process RSS \d+ MiB\): .*\d+\.\d MiB/);
    expect(text).toMatch(/ {4}session open \d+ ms, last: CREATE TEMP TABLE held/);
  });
});
