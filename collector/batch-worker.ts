// A batch worker thread (collector/batch-pool.ts): checks each batch it is sent and hands back the
// outcome, its spool lines moved rather than copied.
import { parentPort, workerData } from 'node:worker_threads';
import { checkBatchSync, type BatchLimits, type BatchRequest } from './batch.ts';

export interface BatchTask {
  id: number;
  raw: Uint8Array;
  req: BatchRequest;
}

const limits = (workerData as { limits: BatchLimits }).limits;

parentPort!.on('message', (task: BatchTask) => {
  const outcome = checkBatchSync(task.raw, task.req, limits);
  parentPort!.postMessage({ id: task.id, outcome }, outcome.ok && outcome.lines.byteLength > 0 ? [outcome.lines.buffer as ArrayBuffer] : []);
});
// Loaded and listening: the pool waits for this before the collector takes requests.
parentPort!.postMessage({ ready: true });
