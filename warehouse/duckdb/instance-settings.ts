// The settings every DuckDB instance of a process opens with (docs/architecture.md): explicit threads,
// memory limit and spill folder, nothing downloaded at run time, freed memory handed back, and
// every timestamp in UTC whatever the machine's zone.
import type { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDbConfig } from './config.ts';

/** What DuckDB's allocator may keep of freed memory, per thread, once a statement ends. */
export const ALLOCATOR_FLUSH_THRESHOLD = '8MB';

/** The options of `DuckDBInstance.create`. */
export function instanceSettings(config: DuckDbConfig, spillDir: string, instance: 'main' | 'small reads' = 'main'): Record<string, string> {
  const flush = config.allocatorFlushThreshold ?? ALLOCATOR_FLUSH_THRESHOLD;
  return {
    threads: String(config.threads),
    memory_limit: instance === 'small reads' ? (config.smallReadsMemoryLimit ?? config.memoryLimit) : config.memoryLimit,
    temp_directory: spillDir,
    // No extension downloads at run time: the machine may be offline.
    autoinstall_known_extensions: 'false',
    // DuckDB's cache of file contents would keep what every Parquet file read left in the
    // buffer pool: a process's memory would grow with the history it reads (the files are in
    // the OS page cache anyway; measured in docs/warehouse-state.md, "How the warehouse grows").
    enable_external_file_cache: 'false',
    // Memory a statement freed goes back to the system when it ends: DuckDB's allocator would
    // keep up to 128 MB per thread (512 MB after a bulk free), and the RSS of a process that ran
    // one big statement would stay far above its memory limit. The API keeps less
    // (API_DUCKDB_ALLOCATOR_FLUSH). Measured in docs/api.md ("Exports", "Serving at scale").
    allocator_flush_threshold: flush,
    // After a bulk free inside a statement: the API's small reads keep up to 8MB (at 2MB every
    // hash table a statement freed went back to the system and was faulted in again); exports and
    // pilot reports hand it back, for their RSS (docs/api.md, "Serving at scale"). The jobs keep
    // DUCKDB_ALLOCATOR_BULK_FLUSH (8MB): more is fewer page faults for more RSS (docs/operations.md, "Memory").
    allocator_bulk_deallocation_flush_threshold: instance === 'small reads' ? ALLOCATOR_FLUSH_THRESHOLD : (config.allocatorBulkFlushThreshold ?? flush),
  };
}

/**
 * Every timestamp is UTC, whatever the machine's zone: set once for every connection (the
 * setting needs ICU, loaded by then, so it cannot be an option of create()).
 */
export async function setUtc(instance: DuckDBInstance): Promise<void> {
  const setup = await instance.connect();
  try {
    await setup.run(`SET GLOBAL TimeZone = 'UTC'`);
  } finally {
    setup.disconnectSync();
  }
}
