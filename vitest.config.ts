import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/setup/sequencer.ts';
import { testTempRoot } from './test/setup/temp-dir.ts';

// The run's temporary files on a memory filesystem when there is one (test/setup/temp-dir.ts).
process.env['TMPDIR'] = testTempRoot();

/**
 * Files that read the process's own Prometheus registry (lib/metrics.ts) as absolute values: they
 * run in a process of their own. Every other file shares its worker process with the files run
 * before it (isolate: false): the project's modules (DuckDB's addon, Koa, zod schemas, BullMQ)
 * are loaded once a worker, not once a file, which took about a quarter of the suite's CPU time.
 * A file that needs a fresh process (module state of its own) belongs here.
 */
const FRESH_PROCESS = ['test/collector/metrics.test.ts', 'test/lib/http/metrics.test.ts'];

export default defineConfig({
  test: {
    // The `p2ptel` processes that tests start run a build of the sources made at the start of the
    // run (test/setup/build.ts), never a dist/ that may be older than them (bin/p2ptel.js).
    // DuckDB at one thread in the processes tests start, as in the test helpers' own warehouses:
    // the data sets are small, two files run at once on two cores, and a second thread per
    // instance cost about a sixth more CPU time for the same wall time.
    // `start`'s sample data at 100 sessions a stream, not 400 (P2PTEL_TEST_START_SESSIONS,
    // lib/config.ts): the five files that run `start` take about a tenth less CPU
    // (docs/benchmarks.md, 2026-11-28, "start's sample data in the test run").
    env: { P2PTEL_BUILD: 'dist-test', DUCKDB_THREADS: '1', P2PTEL_TEST_START_SESSIONS: '100' },
    // DuckDB is a native addon: separate processes, not worker threads.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Three files at a time on two cores: many wait on child processes, Redis or timers (README.md,
    // "Tests and benchmarks").
    maxWorkers: 3,
    // The longest files first, on a fresh clone too (test/setup/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: FRESH_PROCESS,
          isolate: false,
          // The removal of the run's temporary folder at its end (test/setup/temp-dir.ts), a private
          // redis-server for the job tests (never the user's own Redis), and a folder for data sets
          // several files build alike (built once a run, copied from). The files of the other
          // project need none of them.
          globalSetup: ['test/setup/temp-dir.ts', 'test/setup/build.ts', 'test/setup/redis.ts', 'test/setup/data-cache.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'fresh-process',
          include: FRESH_PROCESS,
          isolate: true,
        },
      },
    ],
  },
});
