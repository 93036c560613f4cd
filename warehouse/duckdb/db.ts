// One in-memory DuckDB instance per process (instance-settings.ts), or two in the API (small reads
// apart from big work: DuckDbConfig.smallReadsMemoryLimit), and two pools of slots: a shared one
// and a separate one for exports. Work runs in sessions (session.ts), each cancellable by an
// AbortSignal, optionally bounded and timed.
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDbConfig } from './config.ts';
import { instanceSettings, setUtc } from './instance-settings.ts';
import { DbSession, QueryTimeout, type SessionOptions, type SqlTracer } from './session.ts';
import { Slots } from './slots.ts';

export interface DbOptions {
  /** Slots of the separate pool that exports run in (so that they cannot starve other work). */
  exportSlots?: number;
  /** Bounded work (a request's) is refused past this many calls waiting for a slot. */
  maxQueued?: number;
}

export class Db {
  private releaseTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly slots: Slots,
    private readonly exportSlots: Slots,
    private readonly config: DuckDbConfig,
    /** Where sessions of small reads run (the main instance unless the config gives them their own). */
    private readonly smallReads: DuckDBInstance,
  ) {
    const { releaseIdleMs } = config;
    if (releaseIdleMs === undefined) return;
    const onIdle = () => {
      clearTimeout(this.releaseTimer);
      this.releaseTimer = setTimeout(() => {
        if (this.slots.idle && this.exportSlots.idle) void this.releaseMemory().catch(() => {});
      }, releaseIdleMs);
      this.releaseTimer.unref();
    };
    slots.onIdle = onIdle;
    exportSlots.onIdle = onIdle;
  }

  private get sqlTrace(): boolean {
    return this.config.sqlTrace ?? false;
  }

  static async open(config: DuckDbConfig, spillDir: string, options: DbOptions = {}): Promise<Db> {
    fs.mkdirSync(spillDir, { recursive: true });
    // A private in-memory database: no database file is ever shared between processes (docs/architecture.md).
    const instance = await DuckDBInstance.create(':memory:', instanceSettings(config, spillDir));
    await setUtc(instance);
    let smallReads = instance;
    if (config.smallReadsMemoryLimit !== undefined) {
      // Its own spill folder: two instances would share temporary file names.
      const smallSpill = path.join(spillDir, 'small-reads');
      fs.mkdirSync(smallSpill, { recursive: true });
      smallReads = await DuckDBInstance.create(':memory:', instanceSettings(config, smallSpill, 'small reads'));
      await setUtc(smallReads);
    }
    const maxQueued = options.maxQueued ?? Number.POSITIVE_INFINITY;
    return new Db(instance, new Slots(config.maxConcurrent, maxQueued), new Slots(options.exportSlots ?? 1, maxQueued), config, smallReads);
  }

  /** Calls running and waiting in each pool. */
  get stats(): { default: { running: number; queued: number }; exports: { running: number; queued: number } } {
    return { default: this.slots.stats, exports: this.exportSlots.stats };
  }

  /**
   * A session on its own connection (its own temp tables); close it when done. Exports and big
   * work (`releaseAfter`) run in the main instance, which hands freed memory back as it goes;
   * everything else in the small reads' one, which keeps some for the next statement.
   */
  async session(options: SessionOptions = {}): Promise<DbSession> {
    options.signal?.throwIfAborted();
    const big = options.pool === 'exports' || options.releaseAfter === true;
    const conn = await (big ? this.instance : this.smallReads).connect();
    const onClosed = options.releaseAfter ? () => void this.releaseMemory().catch(() => {}) : undefined;
    const instance = big ? this.instance : this.smallReads;
    const tracer = this.sqlTrace ? this.tracerOf(instance) : undefined;
    const closed = tracer ? () => (tracer.close(), onClosed?.()) : onClosed;
    return new DbSession(conn, options.pool === 'exports' ? this.exportSlots : this.slots, options, this.sqlTrace, closed, tracer);
  }

  /** P2PTEL_SQL_TRACE=1: the statements in flight (their opening text), and a failed statement's view of the instance's memory. */
  private readonly inFlight = new Map<number, { sql: string; t0: number }>();
  /** Sessions open, by number: when opened, their last statement. */
  private readonly open = new Map<number, { t0: number; last: string }>();
  private nextToken = 0;
  private tracerOf(instance: DuckDBInstance): SqlTracer & { close(): void } {
    const id = this.nextToken++;
    this.open.set(id, { t0: performance.now(), last: '' });
    return {
      close: () => void this.open.delete(id),
      begin: (sql) => {
        const token = this.nextToken++;
        this.inFlight.set(token, { sql, t0: performance.now() });
        this.open.get(id)!.last = sql;
        return token;
      },
      end: (token) => void this.inFlight.delete(token),
      describe: async () => {
        const conn = await instance.connect();
        try {
          const mem = (await conn.runAndReadAll(`SELECT tag, memory_usage_bytes AS m, temporary_storage_bytes AS t FROM duckdb_memory() WHERE memory_usage_bytes > 0 OR temporary_storage_bytes > 0 ORDER BY m DESC`)).getRowObjects();
          const mib = (b: unknown) => (Number(b) / 2 ** 20).toFixed(1);
          const now = performance.now();
          const others = [...this.inFlight.values()].map((f) => `    in flight ${(now - f.t0).toFixed(0)} ms: ${f.sql.replace(/\s+/g, ' ').slice(0, 200)}\n`);
          const sessions = [...this.open.values()].map((o) => `    session open ${(now - o.t0).toFixed(0)} ms, last: ${o.last.replace(/\s+/g, ' ').slice(0, 120)}\n`);
          return `  memory (process RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB): ${mem.map((r) => `${String(r['tag'])} ${mib(r['m'])} MiB${Number(r['t']) > 0 ? ` (+${mib(r['t'])} spilled)` : ''}`).join(', ')}\n${others.join('')}${sessions.join('')}`;
        } finally {
          conn.closeSync();
        }
      },
    };
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

  /**
   * Hands the memory that DuckDB's allocator keeps of what statements freed back to the system.
   * Its allocator (jemalloc, on Linux) keeps freed pages for reuse and gives them back only as
   * later allocations go on, so a process that ran one big statement and then little else stays at
   * that statement's high-water mark (measured in docs/api.md, "Serving at scale"). DuckDB offers no
   * statement for it, but purges every arena (and trims the C heap) whenever its scheduler's
   * thread count changes (every arena of the process: both instances'): one more thread, then the
   * configured count again. Statements running meanwhile may get the extra thread for a moment;
   * nothing else changes.
   */
  async releaseMemory(): Promise<void> {
    if (this.closed) return;
    const conn = await this.instance.connect();
    try {
      await conn.run(`SET threads = ${this.config.threads + 1}`);
      await conn.run(`SET threads = ${this.config.threads}`);
    } finally {
      conn.closeSync();
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.releaseTimer);
    if (this.smallReads !== this.instance) this.smallReads.closeSync();
    this.instance.closeSync();
  }
}
