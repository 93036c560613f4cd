// A batch worker thread (collector/batch-pool.ts): checks each batch it is sent and hands back the
// outcome, its spool lines moved rather than copied. The event loop sends the lines' memory back
// once the spool has written it, and it is reused for the next batch's lines: a batch's lines
// (~370 KiB for 500 reports) then cost no fresh memory here (page faults on first touch) and no
// new external memory on the event loop's thread (which makes V8 collect garbage sooner).
import { parentPort, workerData } from 'node:worker_threads';
import { checkBatchSync, type BatchLimits, type BatchRequest } from './batch.ts';

export interface BatchTask {
  id: number;
  raw: Uint8Array;
  req: BatchRequest;
}

/** Memory of spool lines the event loop has written, sent back to be written again. */
export interface RecycledLines {
  recycle: ArrayBuffer;
}

const limits = (workerData as { limits: BatchLimits }).limits;

/** Buffers kept for reuse, at most MAX_SPARE (a few batches' lines). */
const spare: ArrayBuffer[] = [];
const MAX_SPARE = 4;
/** A new buffer is at least this large, so that most batches fit in a reused one. */
const MIN_BUFFER_BYTES = 512 * 1024;

function linesBuffer(size: number): Uint8Array {
  for (let i = 0; i < spare.length; i++) {
    if (spare[i]!.byteLength >= size) return new Uint8Array(spare.splice(i, 1)[0]!, 0, size);
  }
  return new Uint8Array(new ArrayBuffer(Math.max(size, MIN_BUFFER_BYTES)), 0, size);
}

parentPort!.on('message', (task: BatchTask | RecycledLines) => {
  if ('recycle' in task) {
    if (spare.length < MAX_SPARE) spare.push(task.recycle);
    return;
  }
  const outcome = checkBatchSync(task.raw, task.req, limits, linesBuffer);
  parentPort!.postMessage({ id: task.id, outcome }, outcome.ok && outcome.lines.byteLength > 0 ? [outcome.lines.buffer as ArrayBuffer] : []);
});
// Loaded and listening: the pool waits for this before the collector takes requests.
parentPort!.postMessage({ ready: true });
