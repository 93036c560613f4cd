// Starts a worker thread on a TypeScript module of the project, when the code runs from the sources
// (tsx, vitest): worker threads do not inherit the tsx loader of their parent, so each registers it
// again. workerData.module: the module's file URL. Compiled code (dist/) starts its workers on
// their compiled module directly (collector/batch-pool.ts).
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.module);
