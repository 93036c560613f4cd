// Commands whose defaults differ from the settings table's (the environment and flags override
// them), for memory (docs/operations.md, "Memory"): `start` runs the API, a collector, the rollups,
// compaction and the pilot reports in one process, which should fit in 1 GiB on a laptop beside a
// browser; a worker should stay within 800 MiB whatever job it runs. Each gets a DuckDB memory
// limit of its own for its jobs rather than half the machine. The settings' docs quote these values.

/** `start`'s own defaults (cli/actions/start.ts). */
export const START_DEFAULTS = {
  DUCKDB_MEMORY_LIMIT: '256MB',
} as const satisfies Record<string, string>;

/**
 * A `worker` process's own defaults (cli/actions/worker.ts): `start`'s limit since 2026-11-29,
 * when 384MB let a worker's compaction beside its runs peak at 891 MiB under `bench:live`
 * (256MB, with layer merges made in parts: 752 MiB; docs/benchmarks.md, "the worker tier's memory").
 */
export const WORKER_DEFAULTS = {
  DUCKDB_MEMORY_LIMIT: '256MB',
} as const satisfies Record<string, string>;
