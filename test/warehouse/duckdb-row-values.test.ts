// Rows as the sessions hand them over (warehouse/duckdb/row-values.ts): 64- and 128-bit integers
// as exact numbers or refused, never rounded; everything else as @duckdb/node-api's JS converter
// gives it (DECIMAL as the nearest double, TIMESTAMP as Date, NULL as null).
import { afterAll, beforeAll, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Db } from '../../warehouse/duckdb/db.ts';

let dir: string;
let db: Db;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'p2ptel-row-values-'));
  db = await Db.open({ threads: 1, memoryLimit: '128MB', maxConcurrent: 1 }, path.join(dir, 'spill'));
});

afterAll(async () => {
  db?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const one = (sql: string) => db.withSession((s) => s.one<Record<string, unknown>>(sql));

it('hands integers of every width over as exact numbers, in rows, lists, structs and columns', async () => {
  expect(
    await one(`SELECT 7::INTEGER AS i, 9007199254740991::BIGINT AS big, -9007199254740991::BIGINT AS low, sum(x)::HUGEINT AS huge,
                      3::UBIGINT AS u, count(*) AS n, [1, 2]::BIGINT[] AS list, {'n': 4::BIGINT} AS struct, NULL::BIGINT AS none
               FROM (VALUES (4000000000000000), (5000000000000000)) t(x)`),
  ).toEqual({ i: 7, big: 2 ** 53 - 1, low: -(2 ** 53 - 1), huge: 9e15, u: 3, n: 2, list: [1, 2], struct: { n: 4 }, none: null });
  const columns = await db.withSession((s) => s.columns<{ n: unknown[] }>(`SELECT range AS n FROM range(3)`));
  expect(columns.n).toEqual([0, 1, 2]);
});

it('refuses an integer that a double would round, rather than rounding it', async () => {
  await expect(one(`SELECT 9007199254740992::BIGINT AS n`)).rejects.toThrow(new RangeError('integer 9007199254740992 is beyond exact double range'));
  await expect(one(`SELECT -9007199254740992::HUGEINT AS n`)).rejects.toThrow(RangeError);
  await expect(one(`SELECT 18446744073709551615::UBIGINT AS n`)).rejects.toThrow(RangeError);
  expect(await one(`SELECT CAST(18446744073709551615::UBIGINT AS VARCHAR) AS n`)).toEqual({ n: '18446744073709551615' });
});

it('hands other values over as the client does: DECIMAL as the nearest double, TIMESTAMP as Date', async () => {
  expect(
    await one(`SELECT CAST(1 / 3 AS DECIMAL(38, 12)) AS third, 0.1::DOUBLE AS d, TIMESTAMP '2026-11-20 12:00:00.123456' AS ts, 'x' AS s, true AS b`),
  ).toEqual({ third: 0.333333333333, d: 0.1, ts: new Date('2026-11-20T12:00:00.123Z'), s: 'x', b: true });
});
