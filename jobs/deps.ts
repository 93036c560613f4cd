// What every job function needs: the process's DuckDB, the warehouse layout, config and a logger.
// The inline CLI and the BullMQ workers build one of these and call the same functions.
import path from 'node:path';
import fs from 'node:fs/promises';
import type { AppConfig } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { Db } from '../warehouse/duckdb/index.ts';
import { hostScratchDir, warehouseLayout, type WarehouseLayout } from '../warehouse/layout.ts';

export interface JobDeps {
  db: Db;
  layout: WarehouseLayout;
  config: AppConfig;
  log: Logger;
}

/** Open the process's DuckDB (spilling into the warehouse's tmp folder) for a config. */
export async function openJobDeps(config: AppConfig, log: Logger): Promise<JobDeps & { close(): Promise<void> }> {
  const layout = warehouseLayout(config.warehouseDir);
  const spill = path.join(hostScratchDir(layout), `duckdb-${process.pid}`);
  const db = await Db.open(config.duckdb, spill);
  return {
    db,
    layout,
    config,
    log,
    async close() {
      db.close();
      await fs.rm(spill, { recursive: true, force: true });
    },
  };
}
