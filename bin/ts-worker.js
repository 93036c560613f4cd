// Starts a worker thread on a TypeScript module of the project: worker threads do not inherit the
// tsx loader that bin/p2ptel.js registered, so each registers it again. workerData.module: the
// module's file URL.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.module);
