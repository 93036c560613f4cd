// Slots capping the DuckDB calls in flight (they run on libuv's small thread pool), taken in
// arrival order; a waiter leaves the queue when its signal aborts, and a bounded queue refuses
// work past its bound rather than growing.
import { InternalError } from '../../lib/errors.ts';

/** Raised instead of queueing when a bounded queue of DuckDB work is full. */
export class SlotsBusy extends InternalError {
  override name = 'SlotsBusy';
  override readonly errorCode = 'slots_busy';
  constructor() {
    super('too much DuckDB work is queued');
  }
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/**
 * A fixed number of slots for DuckDB calls, taken in arrival order. A waiter whose signal aborts
 * (its client left, its deadline passed) leaves the queue at once; work that asks for a bounded
 * queue is refused (SlotsBusy) rather than queued past `maxQueued`.
 */
export class Slots {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    readonly size: number,
    readonly maxQueued = Number.POSITIVE_INFINITY,
  ) {}

  /** Called each time the last running call ends with none waiting. */
  onIdle: (() => void) | undefined;

  get idle(): boolean {
    return this.running === 0 && this.waiting.length === 0;
  }

  get stats(): { running: number; queued: number } {
    return { running: this.running, queued: this.waiting.length };
  }

  async run<T>(fn: () => Promise<T>, opts: { signal?: AbortSignal | undefined; bounded?: boolean } = {}): Promise<T> {
    await this.acquire(opts.signal, opts.bounded ?? false);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private acquire(signal: AbortSignal | undefined, bounded: boolean): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.running < this.size && this.waiting.length === 0) {
      this.running++;
      return Promise.resolve();
    }
    if (bounded && this.waiting.length >= this.maxQueued) return Promise.reject(new SlotsBusy());
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal!.reason);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) {
      // The slot passes straight to the next waiter: `running` does not change.
      next.signal?.removeEventListener('abort', next.onAbort);
      next.resolve();
    } else {
      this.running--;
      if (this.running === 0) this.onIdle?.();
    }
  }
}
