// Global setup of the test run: one private redis-server for every test file (each file uses its
// own queue prefix). When redis-server is missing, only the tests that need Redis fail, with a
// message saying how to install it.
import type { TestProject } from 'vitest/node';
import { REDIS_MISSING_MESSAGE, redisServerInstalled, startRedisServer } from '../helpers/redis-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string | null;
    redisError: string | null;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!redisServerInstalled()) {
    project.provide('redisUrl', null);
    project.provide('redisError', REDIS_MISSING_MESSAGE);
    return async () => {};
  }
  const server = await startRedisServer();
  project.provide('redisUrl', server.url);
  project.provide('redisError', null);
  return () => server.stop();
}
