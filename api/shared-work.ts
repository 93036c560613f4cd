// Work shared by concurrent requests for the same thing (one computation, several waiters), and
// cancelled when the last request waiting for it has gone: a client that leaves frees the DuckDB
// work it started unless another request still needs it.

/** `p`, or the signal's reason as soon as it aborts (`p` then settles unobserved). */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e as Error);
      },
    );
  });
}

interface Shared<T> {
  result: Promise<T>;
  waiters: number;
  ac: AbortController;
}

export class SharedWork<T> {
  private readonly running = new Map<string, Shared<T>>();

  /** Computations under way (for tests and metrics). */
  get size(): number {
    return this.running.size;
  }

  /**
   * Wait for the computation of `key`, starting it with `start` when none is under way. The
   * caller's `signal` only stops its own wait; the computation's signal aborts when no caller waits
   * any more (then a later caller starts afresh). A failure is not kept.
   */
  async join(key: string, start: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
    signal.throwIfAborted();
    let c = this.running.get(key);
    if (!c) {
      const ac = new AbortController();
      const entry: Shared<T> = { result: start(ac.signal), waiters: 0, ac };
      this.running.set(key, entry);
      void entry.result.then(
        () => this.forget(key, entry),
        () => this.forget(key, entry),
      );
      c = entry;
    }
    c.waiters++;
    try {
      return await untilAborted(c.result, signal);
    } finally {
      if (--c.waiters === 0 && this.running.get(key) === c) {
        this.forget(key, c);
        c.ac.abort(signal.reason ?? new Error('no request waits any more'));
      }
    }
  }

  private forget(key: string, c: Shared<T>): void {
    if (this.running.get(key) === c) this.running.delete(key);
  }
}
