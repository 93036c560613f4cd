// A session on its own DuckDB connection: every call waits for a slot of its pool, and is
// interrupted when the session's signal aborts or its time runs out; streamed results release
// what they hold however they end.
import type { DuckDBConnection, DuckDBDataChunk } from '@duckdb/node-api';
import type { SqlParams, SqlTypes } from './param-values.ts';
import { rowValues } from './row-values.ts';
import type { Slots } from './slots.ts';
import { InternalError } from '../../lib/errors.ts';

export type Row = object;

export interface SessionOptions {
  /** `exports` runs every call in the export pool; `default` in the shared one. */
  pool?: 'default' | 'exports';
  /** Aborting it removes the session's waiting call from the queue or interrupts its running one. */
  signal?: AbortSignal | undefined;
  /** Refuse (SlotsBusy) rather than queue past the pool's bound. */
  bounded?: boolean;
  /** Each call is interrupted (QueryTimeout) after this long holding its slot. */
  callTimeoutMs?: number | undefined;
  /**
   * Big work (a pilot report, an on-demand size, a platform-wide breakdown): it runs in the
   * instance that hands freed memory back as it goes (Db.session), and once the session closes, what DuckDB's allocator kept of it goes back to the system at once, whatever
   * else runs (Db.releaseMemory), rather than when the instance is next idle.
   */
  releaseAfter?: boolean;
}

/** DuckDB's error when a statement's work does not fit in its memory limit (nothing is broken). */
export function isOutOfMemory(err: unknown): boolean {
  return err instanceof Error && /^Out of Memory Error\b/.test(err.message);
}

/** P2PTEL_SQL_TRACE=1: what a failed statement's trace says of the other statements in flight and of the instance's memory. */
export interface SqlTracer {
  begin(sql: string): number;
  end(token: number): void;
  describe(): Promise<string>;
}

export class QueryTimeout extends InternalError {
  override name = 'QueryTimeout';
  override readonly errorCode = 'query_timeout';
  constructor(readonly ms: number) {
    super(`query interrupted after ${ms} ms`);
  }
}

export class DbSession {
  private readonly signal: AbortSignal | undefined;
  private readonly bounded: boolean;
  private readonly callTimeoutMs: number | undefined;
  private readonly onAbort = () => this.conn.interrupt();

  constructor(
    readonly conn: DuckDBConnection,
    private readonly slots: Slots,
    options: SessionOptions = {},
    /** Each statement's time and opening text on stderr (P2PTEL_SQL_TRACE=1; docs/warehouse-state.md). */
    private readonly sqlTrace = false,
    /** Called once the connection is closed. */
    private readonly onClosed: () => void = () => {},
    /** With P2PTEL_SQL_TRACE=1: the statements in flight in the instance, and what holds its memory when one runs out of it (Db). */
    private readonly tracer?: SqlTracer,
  ) {
    this.signal = options.signal;
    this.bounded = options.bounded ?? false;
    this.callTimeoutMs = options.callTimeoutMs;
    this.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  private trace(sql: string, startedAt: number): void {
    if (this.sqlTrace) process.stderr.write(`sql ${(performance.now() - startedAt).toFixed(0)} ms  ${sql.replace(/\s+/g, ' ').slice(0, 160)}\n`);
  }

  /** A statement through the slots, traced (P2PTEL_SQL_TRACE=1) when it ends and when it fails (`sql failed after`: which statement ran out of memory, say). */
  private async traced<T>(sql: string, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    const token = this.tracer?.begin(sql);
    try {
      const result = await this.call(fn);
      this.trace(sql, t0);
      return result;
    } catch (err) {
      if (this.sqlTrace) {
        const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
        const held = this.tracer && isOutOfMemory(err) ? await this.tracer.describe().catch((e: unknown) => `(memory not read: ${String(e)})`) : '';
        process.stderr.write(`sql failed after ${(performance.now() - t0).toFixed(0)} ms (${why})  ${sql.replace(/\s+/g, ' ').slice(0, 160)}\n${held}`);
      }
      throw err;
    } finally {
      if (token !== undefined) this.tracer!.end(token);
    }
  }

  /**
   * One DuckDB call through the pool's slots: it waits its turn (leaving the queue if the session's
   * signal aborts), and fails with the signal's reason, or a QueryTimeout, when it was interrupted.
   */
  private call<T>(fn: () => Promise<T>): Promise<T> {
    return this.slots.run(
      async () => {
        this.signal?.throwIfAborted();
        let timedOut = false;
        const timer =
          this.callTimeoutMs === undefined
            ? undefined
            : setTimeout(() => {
                timedOut = true;
                this.conn.interrupt();
              }, this.callTimeoutMs);
        try {
          return await fn();
        } catch (err) {
          if (this.signal?.aborted) throw this.signal.reason;
          if (timedOut) throw new QueryTimeout(this.callTimeoutMs!);
          throw err;
        } finally {
          clearTimeout(timer);
        }
      },
      { signal: this.signal, bounded: this.bounded },
    );
  }

  /** Run a statement; returns the rows it changed (for COPY: the rows written). */
  async run(sql: string, params?: SqlParams, types?: SqlTypes): Promise<number> {
    const result = await this.traced(sql, () => this.conn.run(sql, params, types));
    return result.rowsChanged;
  }

  /** Like `run`, calling `onProgress(percent)` a few times a second while DuckDB works. */
  async runWithProgress(
    sql: string,
    params: SqlParams | undefined,
    types: SqlTypes | undefined,
    onProgress: (percent: number) => void,
    everyMs = 200,
  ): Promise<number> {
    const timer = setInterval(() => {
      const p = this.conn.progress.percentage;
      if (p >= 0) onProgress(p);
    }, everyMs);
    try {
      return await this.run(sql, params, types);
    } finally {
      clearInterval(timer);
    }
  }

  /**
   * A streaming result, chunk by chunk: the query and every fetch of a chunk go through the slots,
   * and nothing is fetched before the caller asks, so memory stays flat.
   */
  async *chunks(sql: string, params?: SqlParams, types?: SqlTypes): AsyncGenerator<DuckDBDataChunk> {
    const result = await this.call(() => this.conn.stream(sql, params, types));
    this.openStreams++;
    try {
      for (;;) {
        const chunk = await this.call(() => result.fetchChunk());
        if (!chunk || chunk.rowCount === 0) return;
        yield chunk;
      }
    } finally {
      this.openStreams--;
      // Left before its end (abandoned, failed, interrupted) or not: DuckDB keeps the stream's
      // query, and the Parquet files its readers hold open, until the connection starts another
      // statement; closing the connection or collecting the result does not end it.
      if (!this.closing) await this.endStream();
    }
  }

  /** Streams of this session whose generators have not finished. */
  private openStreams = 0;
  /** The statement ending a stream, while it runs (`close` waits for it). */
  private ending: Promise<void> | null = null;

  /** Ends the connection's pending streamed query (a statement that reads nothing replaces it). */
  private endStream(): Promise<void> {
    const p = this.conn
      .run('SELECT 1')
      .then(() => {}, () => {})
      .finally(() => {
        if (this.ending === p) this.ending = null;
      });
    this.ending = p;
    return p;
  }

  /** All rows as plain JS objects (values as row-values.ts converts them: integers as exact numbers, timestamps as Date). */
  async all<T extends Row = Row>(sql: string, params?: SqlParams, types?: SqlTypes): Promise<T[]> {
    const reader = await this.traced(sql, () => this.conn.runAndReadAll(sql, params, types));
    return reader.convertRowObjects(rowValues) as T[];
  }

  /** All rows as one JS array per column, values converted as by `all` (cheaper than row objects for many rows). */
  async columns<T extends Record<string, unknown[]>>(sql: string, params?: SqlParams, types?: SqlTypes): Promise<T> {
    const reader = await this.traced(sql, () => this.conn.runAndReadAll(sql, params, types));
    return reader.convertColumnsObject(rowValues) as unknown as T;
  }

  async one<T extends Row = Row>(sql: string, params?: SqlParams, types?: SqlTypes): Promise<T> {
    const rows = await this.all<T>(sql, params, types);
    const row = rows[0];
    if (row === undefined) throw new Error('query returned no row');
    return row;
  }

  private closing = false;

  /** Close the connection (once; later calls do nothing). */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    this.signal?.removeEventListener('abort', this.onAbort);
    // A stream still open (or being ended): end its query first (see `chunks`), then disconnect.
    const ending = this.ending ?? (this.openStreams > 0 ? this.endStream() : null);
    if (ending)
      void ending.finally(() => {
        this.conn.closeSync();
        this.onClosed();
      });
    else {
      this.conn.closeSync();
      this.onClosed();
    }
  }
}
