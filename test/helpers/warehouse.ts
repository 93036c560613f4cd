// Test fixtures: a temporary warehouse with real files and the project's own job dependencies.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type AppConfig } from '../../lib/config.ts';
import { silentLogger } from '../../lib/log.ts';
import { openJobDeps, type JobDeps } from '../../jobs/deps.ts';

export interface TestWarehouse extends JobDeps {
  root: string;
  close(): Promise<void>;
}

export async function tempDir(prefix = 'p2ptel-test-'): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

/** A fresh warehouse folder with a DuckDB of its own; `close` removes everything. */
export async function openTestWarehouse(env: Record<string, string> = {}): Promise<TestWarehouse> {
  const root = await tempDir();
  const config: AppConfig = loadConfig({ overrides: { WAREHOUSE_DIR: root }, env: { DUCKDB_THREADS: '1', DUCKDB_MEMORY_LIMIT: '2GB', ...env } });
  const deps = await openJobDeps(config, silentLogger);
  return {
    ...deps,
    root,
    async close() {
      await deps.close();
      await fs.rm(root, { recursive: true, force: true });
    },
  };
}
