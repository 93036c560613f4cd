// Work shared by concurrent requests for the same thing (one computation, several waiters), and
// cancelled when the last request waiting for it has gone: a client that leaves frees the DuckDB
// work it started unless another request still needs it.
import type { Context } from 'koa';
import { SlotsBusy } from '../warehouse/duckdb/index.ts';
import { problems } from './problems.ts';
import { Admission } from './admission.ts';
import { DeadlinePassed, requestSignal } from './request-signal.ts';

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

/** What a refused request is told to wait, in seconds. */
const RETRY_AFTER_SECONDS = 2;

/**
 * On-demand DuckDB work of the API (series of other sizes, breakdowns): shared by concurrent
 * requests for the same key (SharedWork), admitted (a per-tenant limit, 429 beyond; a global one,
 * 503 `busy` beyond), bounded in time from the request's arrival (the wait for a DuckDB slot
 * included: 504), and cancelled once every request waiting for it has gone.
 */
export class AdmittedWork<T> {
  private readonly work = new SharedWork<T>();
  private readonly admission: Admission;

  constructor(
    /** What the work is called in a 429's text. */
    private readonly label: string,
    private readonly timeoutMs: number,
    limits: { max: number; perTenant: number },
  ) {
    this.admission = new Admission(limits.max, limits.perTenant);
  }

  /** Computations under way (for tests and metrics). */
  get inProgress(): number {
    return this.work.size;
  }

  /** The result of `key` for the request `ctx`, computed by `compute` (admitted for `tenant`) unless already under way. */
  async run(ctx: Context, key: string, tenant: string, compute: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const { signal, dispose } = requestSignal(ctx, this.timeoutMs);
    try {
      return await this.work.join(key, (workSignal) => this.admitted(tenant, () => compute(workSignal)), signal);
    } catch (err) {
      if (err instanceof DeadlinePassed) throw problems.timeout();
      if (err instanceof SlotsBusy) throw problems.busy(RETRY_AFTER_SECONDS);
      throw err;
    } finally {
      dispose();
    }
  }

  private admitted(tenant: string, compute: () => Promise<T>): Promise<T> {
    const admitted = this.admission.admit(tenant);
    if (!admitted.ok) {
      throw admitted.refusal.scope === 'tenant' ? problems.tooManyRequests(this.label, admitted.refusal.limit, RETRY_AFTER_SECONDS) : problems.busy(RETRY_AFTER_SECONDS);
    }
    const result = compute();
    void result.then(admitted.release, admitted.release);
    return result;
  }
}
