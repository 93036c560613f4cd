// What one process's DuckDB is given: the jobs' and the collector's from DUCKDB_*, the API's from
// API_DUCKDB_* (lib/settings/), checked against this shape where the config is handed over.

export interface DuckDbConfig {
  /** DuckDB worker threads per process. */
  threads: number;
  /** DuckDB memory limit, e.g. "4GB". */
  memoryLimit: string;
  /** Cap on DuckDB calls running at once in one process (they use libuv's pool). */
  maxConcurrent: number;
  /** What DuckDB's allocator may keep of the memory a statement freed, e.g. "8MB" (ALLOCATOR_FLUSH_THRESHOLD when absent). */
  allocatorFlushThreshold?: string;
  /**
   * What the allocator may keep, within a statement, of memory freed in bulk (a hash table, a
   * sort), e.g. "512MB"; above it the memory goes back to the system at once. Absent: as
   * allocatorFlushThreshold.
   */
  allocatorBulkFlushThreshold?: string;
  /**
   * The API's small reads (series, summaries, breakdowns of a tenant) in an instance of their own
   * with this memory limit, whose allocator keeps up to ALLOCATOR_FLUSH_THRESHOLD of what a bulk
   * free released; big work (exports, pilot reports, on-demand sizes) stays in the thrifty one
   * (Db.session). Absent: one instance for everything.
   */
  smallReadsMemoryLimit?: string;
  /**
   * Once no call has run for this long, the memory DuckDB's allocator keeps of freed memory goes
   * back to the system (Db.releaseMemory); absent: never (it keeps it for the next statements).
   */
  releaseIdleMs?: number;
  /** Each statement's time and opening text on stderr (P2PTEL_SQL_TRACE=1; docs/warehouse-state.md). */
  sqlTrace?: boolean;
}
