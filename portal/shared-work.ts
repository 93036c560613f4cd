// Work shared by the requests that want the same thing at the same time: after a snapshot swap every
// open live page asks for its <main> again at once, and the pages of one caller ask for the same
// API answers. The first request for a key starts the work; the others that arrive while it runs
// wait for the same promise instead of repeating it. The work is cancelled only when every waiter
// has gone (each waiter's signal aborted), and is forgotten as soon as it settles: nothing is kept
// beyond the work in flight, so what a later request sees is never older than what it would compute.

interface InFlight<T> {
  promise: Promise<T>;
  controller: AbortController;
  waiters: number;
}

export class SharedWork {
  private readonly inFlight = new Map<string, InFlight<unknown>>();
  /** Requests that found the work for their key already running (for tests and diagnostics). */
  joined = 0;

  /** The result of `work` for `key`: the running one's if there is one, else a new one's. */
  run<T>(key: string, signal: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let entry = this.inFlight.get(key) as InFlight<T> | undefined;
    // Work that every waiter left is being cancelled: a new request starts it again.
    if (entry?.controller.signal.aborted) entry = undefined;
    if (entry) this.joined++;
    else {
      const controller = new AbortController();
      const created: InFlight<T> = { controller, waiters: 0, promise: Promise.resolve().then(() => work(controller.signal)) };
      const forget = () => {
        if (this.inFlight.get(key) === created) this.inFlight.delete(key);
      };
      created.promise.then(forget, forget);
      this.inFlight.set(key, created as InFlight<unknown>);
      entry = created;
    }
    return this.wait(entry, signal);
  }

  /** How many keys have work running. */
  get size(): number {
    return this.inFlight.size;
  }

  private wait<T>(entry: InFlight<T>, signal: AbortSignal | undefined): Promise<T> {
    entry.waiters++;
    if (!signal) return entry.promise;
    if (signal.aborted) return this.leave(entry, signal);
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        this.leave(entry, signal).catch(reject);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      entry.promise.then(
        (v) => {
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (e: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      );
    });
  }

  /** A waiter gone: the work stops when it was the last one. */
  private leave<T>(entry: InFlight<T>, signal: AbortSignal): Promise<T> {
    entry.waiters--;
    if (entry.waiters === 0) entry.controller.abort(signal.reason);
    return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  }
}
