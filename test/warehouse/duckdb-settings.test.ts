// The settings every DuckDB instance opens with: the API's allocator keeps less freed memory than
// the jobs' (API_DUCKDB_ALLOCATOR_FLUSH), its small reads run in an instance of their own
// (API_DUCKDB_SMALL_READS_MEMORY_LIMIT), read back from DuckDB itself; every session works in UTC.
import { afterAll, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../lib/config.ts';
import { Db } from '../../warehouse/duckdb/db.ts';
import type { SessionOptions } from '../../warehouse/duckdb/session.ts';
import { fixtureArgv } from '../helpers/fixtures.ts';
import { START_DEFAULTS } from '../../lib/settings/command-defaults.ts';

const spill = path.join(os.tmpdir(), `duckdb-settings-${process.pid}`);
afterAll(() => fs.rm(spill, { recursive: true, force: true }));

async function settings(db: Db, options: SessionOptions = {}, close = true): Promise<Record<string, string>> {
  const rows = await db.withSession(
    (s) =>
      s.all<{ name: string; value: string }>(
        `SELECT name, value FROM duckdb_settings() WHERE name IN ('allocator_flush_threshold', 'allocator_bulk_deallocation_flush_threshold', 'memory_limit', 'threads')`,
      ),
    options,
  );
  if (close) db.close();
  return Object.fromEntries(rows.map((r) => [r.name, r.value]));
}

it('opens the API instance with its own allocator threshold, the jobs with 8MB, and an operator value when set', async () => {
  const apiDb = await Db.open(loadConfig({ env: {} }).api.duckdb, spill);
  // Big work (exports, pilot reports, on-demand sizes) in the main instance: 192MB, and what a
  // bulk free released goes back as the statement goes on.
  for (const options of [{ pool: 'exports' }, { releaseAfter: true }] as const) {
    const big = await settings(apiDb, options, false);
    expect(big['allocator_flush_threshold']).toMatch(/^(2\.0 MiB|1\.9 MiB)$/);
    expect(big['allocator_bulk_deallocation_flush_threshold']).toBe(big['allocator_flush_threshold']);
    expect(big['memory_limit']).toMatch(/^(192\.0 MiB|183\.1 MiB)$/);
    expect(big['threads']).toBe('1');
  }
  // Small reads in their own instance: 96MB, up to 8MB of a bulk free kept for the next statement.
  const api = await settings(apiDb);
  expect(api['allocator_flush_threshold']).toMatch(/^(2\.0 MiB|1\.9 MiB)$/);
  expect(api['allocator_bulk_deallocation_flush_threshold']).toMatch(/^(8\.0 MiB|7\.6 MiB)$/);
  expect(api['memory_limit']).toMatch(/^(96\.0 MiB|91\.5 MiB)$/);
  expect(api['threads']).toBe('1');
  const jobs = await settings(await Db.open(loadConfig({ env: { DUCKDB_THREADS: '2', DUCKDB_MEMORY_LIMIT: '1GB' } }).duckdb, spill));
  expect(jobs['allocator_flush_threshold']).toMatch(/^(8\.0 MiB|7\.6 MiB)$/);
  expect(jobs['memory_limit']).toMatch(/^(1\.0 GiB|953\.6 MiB)$/);
  // A bulk free within a job's statement goes back past 8MB too, unless DUCKDB_ALLOCATOR_BULK_FLUSH says otherwise.
  expect(jobs['allocator_bulk_deallocation_flush_threshold']).toMatch(/^(8\.0 MiB|7\.6 MiB)$/);
  const own = await settings(await Db.open(loadConfig({ env: {}, defaults: START_DEFAULTS }).duckdb, spill));
  expect(own['allocator_bulk_deallocation_flush_threshold']).toMatch(/^(8\.0 MiB|7\.6 MiB)$/);
  const bulk = await settings(await Db.open(loadConfig({ env: { DUCKDB_ALLOCATOR_BULK_FLUSH: '512MB' } }).duckdb, spill));
  expect(bulk['allocator_bulk_deallocation_flush_threshold']).toMatch(/^(512\.0 MiB|488\.2 MiB)$/);
  expect(bulk['allocator_flush_threshold']).toMatch(/^(8\.0 MiB|7\.6 MiB)$/);
  expect(() => loadConfig({ env: { DUCKDB_ALLOCATOR_BULK_FLUSH: 'lots' } })).toThrow(/DUCKDB_ALLOCATOR_BULK_FLUSH/);
  const set = await settings(await Db.open(loadConfig({ env: { API_DUCKDB_ALLOCATOR_FLUSH: '16MB' } }).api.duckdb, spill));
  expect(set['allocator_flush_threshold']).toMatch(/^(16\.0 MiB|15\.2 MiB)$/);
  expect(() => loadConfig({ env: { API_DUCKDB_ALLOCATOR_FLUSH: 'lots' } })).toThrow(/API_DUCKDB_ALLOCATOR_FLUSH/);
});

it('works in UTC in every session, whatever the machine zone', async () => {
  const { execFileSync } = await import('node:child_process');
  // Chatham is UTC+13:45 on that instant: any local rendering would show another day.
  const out = execFileSync(process.execPath, fixtureArgv('session-time-zone.ts'), { env: { ...process.env, TZ: 'Pacific/Chatham' }, encoding: 'utf8' });
  expect(JSON.parse(out)).toEqual([0, 1].map(() => ({ zone: 'UTC', instant: '2026-03-29 01:30:00+00', day: '2026-03-29' })));
});

/** This process's anonymous resident memory, in MB (what DuckDB's allocator holds counts here). */
async function rssAnonMb(): Promise<number> {
  const status = await fs.readFile('/proc/self/status', 'utf8');
  return Number(/RssAnon:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

/** A statement whose hash table takes a few hundred MB, freed when it ends. */
const BIG = `SELECT count(DISTINCT 'session-' || x::VARCHAR) AS n FROM range(4000000) t(x)`;

it('gives back what its allocator keeps once idle (releaseIdleMs), small reads included, and its threads stay as configured', async () => {
  // The statement runs in the small reads' instance: the release reaches its memory too.
  const db = await Db.open({ threads: 1, memoryLimit: '2GB', smallReadsMemoryLimit: '2GB', maxConcurrent: 1, releaseIdleMs: 100 }, spill);
  try {
    const before = await rssAnonMb();
    expect(await db.withSession((s) => s.one<{ n: number }>(BIG))).toEqual({ n: 4_000_000 });
    const held = await rssAnonMb();
    // jemalloc keeps the freed hash table for reuse: the process holds it after the statement.
    expect(held - before).toBeGreaterThan(100);
    let after = held;
    for (let i = 0; i < 50 && held - after < (held - before) / 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await rssAnonMb();
    }
    expect(held - after).toBeGreaterThan((held - before) / 2);
    const threads = await db.withSession((s) => s.one<{ t: string }>(`SELECT current_setting('threads')::VARCHAR AS t`));
    expect(threads.t).toBe('1');
  } finally {
    db.close();
  }
});

it('gives back what a session marked releaseAfter held once it closes, without waiting for idleness', async () => {
  const db = await Db.open({ threads: 1, memoryLimit: '2GB', maxConcurrent: 2 }, spill);
  try {
    const before = await rssAnonMb();
    await db.withSession((s) => s.one(BIG), { releaseAfter: true });
    let after = await rssAnonMb();
    for (let i = 0; i < 50 && after - before > 50; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await rssAnonMb();
    }
    // Without the option the statement's memory stays held (the test above measures it).
    expect(after - before).toBeLessThan(50);
  } finally {
    db.close();
  }
});
