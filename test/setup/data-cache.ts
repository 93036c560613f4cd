// Global setup of the test run: a folder where data sets that several test files build the same
// way (same seed, same arguments, same asOf) are built once and copied from (test/helpers/api.ts).
// It lives as long as the run.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    dataCacheDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'p2ptel-test-data-'));
  project.provide('dataCacheDir', dir);
  return () => fs.rm(dir, { recursive: true, force: true });
}
