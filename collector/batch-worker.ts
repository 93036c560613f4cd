// A batch worker thread (collector/batch-pool.ts): checks each batch it is sent and hands back the
// outcome. Its spool lines (~370 KiB for 500 reports) are written into memory shared with the event
// loop's thread, a few fixed slots made once per worker: the event loop writes them to the spool
// from there and gives the slot back with this worker's next task, so a batch's lines cost no fresh
// memory (page faults on first touch) and no new ArrayBuffer on either thread. Lines larger than a
// slot, or a batch that finds every slot still held, go in memory of their own, made to their size,
// moved rather than copied, and reused once the event loop sends it back.
import { parentPort, workerData } from 'node:worker_threads';
import { checkBatchSync, type BatchLimits, type BatchOutcome, type BatchRequest } from './batch.ts';

export interface BatchTask {
  id: number;
  raw: Uint8Array;
  req: BatchRequest;
  /**
   * Shared slots the event loop has written since its last task to this worker: free again. They
   * travel with the next task rather than in a message of their own, which would wake this thread
   * for nothing (measured in docs/sdk-ingest.md, "Batch workers").
   */
  released?: number[];
}

/** Memory of spool lines the event loop has written, sent back to be written again. */
export interface RecycledLines {
  recycle: ArrayBuffer;
}

export interface BatchWorkerData {
  /** This module's URL (bin/ts-worker.js imports it when the worker runs the TypeScript sources). */
  module: string;
  limits: BatchLimits;
  /** The slots shared with the event loop, all of one size. */
  slots: SharedArrayBuffer[];
}

/**
 * A checked batch: its outcome, and when its lines are in a shared slot, which one (the outcome's
 * `lines` is then empty: the event loop reads them from its own view of the slot).
 */
export interface BatchDone {
  id: number;
  outcome: BatchOutcome;
  slot?: { index: number; length: number };
}

const { limits, slots } = workerData as BatchWorkerData;
const freeSlots = slots.map((_, i) => i);
/** The slot the last batch's lines went to (taken from freeSlots), or -1. */
let taken = -1;

/** Buffers kept for reuse, at most MAX_SPARE (a few batches' lines). */
const spare: ArrayBuffer[] = [];
const MAX_SPARE = 4;

function linesBuffer(size: number): Uint8Array {
  const slot = freeSlots.length > 0 && size <= slots[0]!.byteLength ? freeSlots.pop()! : -1;
  if (slot >= 0) {
    taken = slot;
    return new Uint8Array(slots[slot]!, 0, size);
  }
  for (let i = 0; i < spare.length; i++) {
    if (spare[i]!.byteLength >= size) return new Uint8Array(spare.splice(i, 1)[0]!, 0, size);
  }
  // Made to the lines' size. A least size (512 KiB, so that most batches would fit a reused one)
  // made every small batch that found the slots held bring 512 KiB of young external memory to the
  // event loop, and past 32 MB of it V8 scavenges at every new ArrayBuffer: 200 connections posting
  // batches of 10 ran at 0.26× of the bare server with it, 0.57× without (bench:ingest).
  return new Uint8Array(new ArrayBuffer(size), 0, size);
}

parentPort!.on('message', (task: BatchTask | RecycledLines) => {
  if ('recycle' in task) {
    if (spare.length < MAX_SPARE) spare.push(task.recycle);
    return;
  }
  if (task.released) freeSlots.push(...task.released);
  taken = -1;
  const outcome = checkBatchSync(task.raw, task.req, limits, linesBuffer);
  if (taken >= 0) {
    if (outcome.ok && outcome.lines.buffer === slots[taken]) {
      const done: BatchDone = { id: task.id, outcome: { ...outcome, lines: new Uint8Array(0) }, slot: { index: taken, length: outcome.lines.byteLength } };
      parentPort!.postMessage(done);
      return;
    }
    freeSlots.push(taken); // not used after all
  }
  const done: BatchDone = { id: task.id, outcome };
  parentPort!.postMessage(done, outcome.ok && outcome.lines.byteLength > 0 ? [outcome.lines.buffer as ArrayBuffer] : []);
});
// Loaded and listening: the pool waits for this before the collector takes requests.
parentPort!.postMessage({ ready: true });
