// The settings every DuckDB instance opens with: the API's allocator keeps less freed memory than
// the jobs' (API_DUCKDB_ALLOCATOR_FLUSH), read back from DuckDB itself; every session works in UTC.
import { afterAll, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../lib/config.ts';
import { Db } from '../../warehouse/duckdb/db.ts';

const spill = path.join(os.tmpdir(), `duckdb-settings-${process.pid}`);
afterAll(() => fs.rm(spill, { recursive: true, force: true }));

async function settings(db: Db): Promise<Record<string, string>> {
  const rows = await db.withSession((s) =>
    s.all<{ name: string; value: string }>(
      `SELECT name, value FROM duckdb_settings() WHERE name IN ('allocator_flush_threshold', 'allocator_bulk_deallocation_flush_threshold', 'memory_limit', 'threads')`,
    ),
  );
  await db.close();
  return Object.fromEntries(rows.map((r) => [r.name, r.value]));
}

it('opens the API instance with its own allocator threshold, the jobs with 8MB, and an operator value when set', async () => {
  const api = await settings(await Db.open(loadConfig({ env: {} }).api.duckdb, spill));
  expect(api['allocator_flush_threshold']).toMatch(/^(2\.0 MiB|1\.9 MiB)$/);
  expect(api['allocator_bulk_deallocation_flush_threshold']).toBe(api['allocator_flush_threshold']);
  expect(api['threads']).toBe('1');
  const jobs = await settings(await Db.open(loadConfig({ env: { DUCKDB_THREADS: '2', DUCKDB_MEMORY_LIMIT: '1GB' } }).duckdb, spill));
  expect(jobs['allocator_flush_threshold']).toMatch(/^(8\.0 MiB|7\.6 MiB)$/);
  const set = await settings(await Db.open(loadConfig({ env: { API_DUCKDB_ALLOCATOR_FLUSH: '16MB' } }).api.duckdb, spill));
  expect(set['allocator_flush_threshold']).toMatch(/^(16\.0 MiB|15\.2 MiB)$/);
  expect(() => loadConfig({ env: { API_DUCKDB_ALLOCATOR_FLUSH: 'lots' } })).toThrow(/API_DUCKDB_ALLOCATOR_FLUSH/);
});

it('works in UTC in every session, whatever the machine zone', async () => {
  const { execFileSync } = await import('node:child_process');
  // Chatham is UTC+13:45 on that instant: any local rendering would show another day.
  const out = execFileSync(process.execPath, ['bin/run-ts.js', 'test/fixtures/session-time-zone.ts'], { env: { ...process.env, TZ: 'Pacific/Chatham' }, encoding: 'utf8' });
  expect(JSON.parse(out)).toEqual([0, 1].map(() => ({ zone: 'UTC', instant: '2026-03-29 01:30:00+00', day: '2026-03-29' })));
});
