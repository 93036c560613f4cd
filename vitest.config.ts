import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The `p2ptel` processes that tests start run a build of the sources made at the start of the
    // run (test/setup/build.ts), never a dist/ that may be older than them (bin/p2ptel.js).
    env: { P2PTEL_BUILD: 'dist-test' },
    // A private redis-server for the job tests (never the user's own Redis), and a folder for
    // data sets several files build alike (built once a run, copied from).
    globalSetup: ['test/setup/build.ts', 'test/setup/redis.ts', 'test/setup/data-cache.ts'],
    // DuckDB is a native addon: separate processes, not worker threads.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores here: a couple of files at a time keeps timings sane.
    maxWorkers: 2,
  },
});
