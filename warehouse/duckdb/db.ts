// One in-memory DuckDB instance per process (instance-settings.ts) and its two pools of slots: a
// shared one and a separate one for exports. Work runs in sessions (session.ts), each cancellable
// by an AbortSignal, optionally bounded and timed.
import fs from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDbConfig } from './config.ts';
import { instanceSettings, setUtc } from './instance-settings.ts';
import { DbSession, QueryTimeout, type SessionOptions } from './session.ts';
import { Slots } from './slots.ts';

export interface DbOptions {
  /** Slots of the separate pool that exports run in (so that they cannot starve other work). */
  exportSlots?: number;
  /** Bounded work (a request's) is refused past this many calls waiting for a slot. */
  maxQueued?: number;
}

export class Db {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly slots: Slots,
    private readonly exportSlots: Slots,
    private readonly sqlTrace: boolean,
  ) {}

  static async open(config: DuckDbConfig, spillDir: string, options: DbOptions = {}): Promise<Db> {
    fs.mkdirSync(spillDir, { recursive: true });
    // A private in-memory database: no database file is ever shared between processes (design.md).
    const instance = await DuckDBInstance.create(':memory:', instanceSettings(config, spillDir));
    await setUtc(instance);
    const maxQueued = options.maxQueued ?? Number.POSITIVE_INFINITY;
    return new Db(instance, new Slots(config.maxConcurrent, maxQueued), new Slots(options.exportSlots ?? 1, maxQueued), config.sqlTrace ?? false);
  }

  /** Calls running and waiting in each pool. */
  get stats(): { default: { running: number; queued: number }; exports: { running: number; queued: number } } {
    return { default: this.slots.stats, exports: this.exportSlots.stats };
  }

  /** A session on its own connection (its own temp tables); close it when done. */
  async session(options: SessionOptions = {}): Promise<DbSession> {
    options.signal?.throwIfAborted();
    const conn = await this.instance.connect();
    return new DbSession(conn, options.pool === 'exports' ? this.exportSlots : this.slots, options, this.sqlTrace);
  }

  /** Run `fn` on a fresh session, closing it afterwards. */
  async withSession<T>(fn: (s: DbSession) => Promise<T>, options: SessionOptions = {}): Promise<T> {
    const s = await this.session(options);
    try {
      return await fn(s);
    } finally {
      s.close();
    }
  }

  /**
   * Like `withSession`, but after `ms` (counted from this call, waits for a slot included) the
   * waiting call leaves the queue or the running statement is interrupted, and the call fails with
   * a QueryTimeout.
   */
  async withSessionTimeout<T>(ms: number, fn: (s: DbSession) => Promise<T>, options: SessionOptions = {}): Promise<T> {
    const timeout = AbortSignal.timeout(ms);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    try {
      return await this.withSession(fn, { ...options, signal });
    } catch (err) {
      if (timeout.aborted && !options.signal?.aborted) throw new QueryTimeout(ms);
      throw err;
    }
  }

  close(): void {
    this.instance.closeSync();
  }
}
