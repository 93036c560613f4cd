// The collector's batch workers: inflating, parsing, validating and serialising a batch costs
// about 6 µs per report, 3 ms for a batch of 500, and on the event loop's thread every other
// request waits behind it. Worker threads do it instead (COLLECTOR_WORKERS, default one per
// core), so the event loop only reads bodies, appends to the spool and answers, and a machine's
// cores share the checking. With 0 workers batches are checked in process (the same code,
// collector/batch.ts). A batch goes to the worker with the fewest batches waiting; a worker that
// dies fails the batches it held (answered 503, retried by the SDK) and is replaced (backing off
// while workers keep dying before one loads; meanwhile batches are checked in process).
import { Worker } from 'node:worker_threads';
import type { Logger } from '../lib/log.ts';
import { checkBatch, type BatchLimits, type BatchOutcome, type BatchRequest } from './batch.ts';
import type { BatchDone, BatchTask, BatchWorkerData, RecycledLines } from './batch-worker.ts';

// Compiled (dist/, bin/build.js), this code and the worker's entry dist/batch-worker.js are plain
// JavaScript side by side in dist/, and a worker starts on it directly. From the TypeScript sources
// (tsx, vitest) a worker thread does not inherit the parent's loader: bin/ts-worker.js registers
// tsx, then imports the worker's module (workerData.module).
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const MODULE = new URL(FROM_SOURCE ? './batch-worker.ts' : './batch-worker.js', import.meta.url).href;
const BOOT = FROM_SOURCE ? new URL('../bin/ts-worker.js', import.meta.url) : new URL(MODULE);

interface Pending {
  resolve: (o: BatchOutcome) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
  /** Settles once the worker has loaded its code (a batch sent before waits in its queue). */
  ready: Promise<void>;
  /** False once it has stopped: no batch goes to it while its replacement waits. */
  alive: boolean;
  /** The memory it writes spool lines into, shared (batch-worker.ts), and this thread's views of it. */
  shared: SharedArrayBuffer[];
  views: Uint8Array[];
  /** Its slots written since its last task: sent with the next one (BatchTask.released). */
  released: number[];
}

/**
 * Each worker's shared slots for spool lines: 500 reports make ~370 KiB of lines, 1,400 fit a slot;
 * a slot is held from the check until the spool has written its lines (the group commit's fsync),
 * and 16 cover the requests a worker has in flight at saturation. At most 16 MiB per worker, and
 * only what large batches have touched is resident.
 */
const SLOT_BYTES = 1024 * 1024;
const SLOTS_PER_WORKER = 16;

/** How long a worker may take to load before the collector gives up starting. */
const WORKER_START_TIMEOUT_MS = 60_000;

export class BatchPool {
  private readonly slots: Slot[] = [];
  /** Which worker's slot a shared buffer is, and its index there. */
  private readonly slotOf = new Map<ArrayBufferLike, { slot: Slot; index: number }>();
  private nextId = 0;
  private closed = false;
  /** Workers that stopped since one last loaded: a worker that cannot even load is not restarted in a tight loop. */
  private failuresInARow = 0;

  constructor(
    workers: number,
    private readonly limits: BatchLimits,
    private readonly log: Logger,
  ) {
    for (let i = 0; i < workers; i++) this.slots.push(this.spawn());
  }

  /** Wait until every worker has loaded its code: the collector takes no request before. */
  async started(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the batch workers did not start within ${WORKER_START_TIMEOUT_MS / 1000} s`)), WORKER_START_TIMEOUT_MS);
    });
    try {
      await Promise.race([Promise.all(this.slots.map((s) => s.ready)), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** How many worker threads check batches (0: in process). */
  get size(): number {
    return this.slots.length;
  }

  /** The live worker with the fewest batches waiting, or null when none is alive. */
  private leastBusy(): Slot | null {
    let slot: Slot | null = null;
    for (const s of this.slots) if (s.alive && (slot === null || s.pending.size < slot.pending.size)) slot = s;
    return slot;
  }

  check(raw: Uint8Array, req: BatchRequest): Promise<BatchOutcome> {
    const slot = this.leastBusy();
    // No worker (0 configured, or every one stopped and waiting to be replaced): check in process.
    if (slot === null) return checkBatch(raw, req, this.limits);
    const id = this.nextId++;
    return new Promise<BatchOutcome>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      const task: BatchTask = slot.released.length > 0 ? { id, raw, req, released: slot.released.splice(0) } : { id, raw, req };
      slot.worker.postMessage(task);
    });
  }

  /**
   * Give the memory of spool lines a worker made back to the workers, once the spool has written
   * them (or failed to): a shared slot goes back to its worker with its next task, a buffer of
   * their own moves to one. Nothing may read `lines` afterwards: a worker writes the next batch's
   * lines there.
   */
  recycle(lines: Uint8Array): void {
    const owner = this.slotOf.get(lines.buffer);
    if (owner !== undefined) {
      if (owner.slot.alive) owner.slot.released.push(owner.index);
      return;
    }
    const memory = lines.buffer;
    if (!(memory instanceof ArrayBuffer) || memory.byteLength === 0) return;
    const slot = this.leastBusy();
    if (slot === null) return;
    const message: RecycledLines = { recycle: memory };
    slot.worker.postMessage(message, [memory]);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }

  private spawn(): Slot {
    const shared = Array.from({ length: SLOTS_PER_WORKER }, () => new SharedArrayBuffer(SLOT_BYTES));
    const data: BatchWorkerData = { module: MODULE, limits: this.limits, slots: shared };
    const worker = new Worker(BOOT, { workerData: data });
    let loaded!: () => void;
    let failedToLoad!: (err: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      loaded = resolve;
      failedToLoad = reject;
    });
    ready.catch(() => {}); // also reported through `started` or the batches it fails
    const slot: Slot = { worker, pending: new Map(), ready, alive: true, shared, views: shared.map((b) => new Uint8Array(b)), released: [] };
    shared.forEach((b, index) => this.slotOf.set(b, { slot, index }));
    worker.on('message', (m: { ready: true } | BatchDone) => {
      if ('ready' in m) {
        this.failuresInARow = 0;
        loaded();
        return;
      }
      const p = slot.pending.get(m.id);
      slot.pending.delete(m.id);
      if (m.slot !== undefined && m.outcome.ok) m.outcome.lines = slot.views[m.slot.index]!.subarray(0, m.slot.length);
      p?.resolve(m.outcome);
    });
    const fail = (err: Error) => {
      failedToLoad(err);
      for (const p of slot.pending.values()) p.reject(err);
      slot.pending.clear();
      if (!slot.alive || this.closed) return; // 'error' and then 'exit': replaced once
      slot.alive = false;
      // At once the first time; then backing off, up to 30 s, while workers keep stopping before
      // one loads.
      const delayMs = this.failuresInARow === 0 ? 0 : Math.min(30_000, 250 * 2 ** (this.failuresInARow - 1));
      this.failuresInARow++;
      this.log.error({ err, restartInMs: delayMs }, 'collector: a batch worker stopped; starting another');
      setTimeout(() => {
        // Its slots are forgotten: lines still waiting for the spool keep their memory alive.
        for (const b of slot.shared) this.slotOf.delete(b);
        const i = this.slots.indexOf(slot);
        if (i >= 0 && !this.closed) this.slots[i] = this.spawn();
      }, delayMs).unref();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`batch worker exited with code ${code}`)));
    // Idle workers do not keep the process alive.
    worker.unref();
    return slot;
  }
}
