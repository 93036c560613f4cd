// One in-memory DuckDB instance per process, with explicit threads, memory and spill folder,
// and slots capping DuckDB calls in flight (they run on libuv's small thread pool): a shared pool
// and a separate one for exports, each cancellable by an AbortSignal and optionally bounded.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  DuckDBInstance,
  quotedIdentifier,
  quotedString,
  timestampValue,
  type DuckDBConnection,
  type DuckDBDataChunk,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import type { DuckDbConfig } from '../lib/config.ts';
import { fsyncDir, fsyncFile } from '../lib/fsx.ts';
import { PROJECT_ROOT } from '../lib/version.ts';

export type SqlParams = Record<string, DuckDBValue>;
/** Types of parameters that cannot be inferred from their JS value (lists, maps...). */
export type SqlTypes = Record<string, DuckDBType | undefined>;
export type Row = object;

/** Raised instead of queueing when a bounded queue of DuckDB work is full. */
export class SlotsBusy extends Error {
  override name = 'SlotsBusy';
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
    }
  }
}

export interface DbOptions {
  /** Slots of the separate pool that exports run in (so that they cannot starve other work). */
  exportSlots?: number;
  /** Bounded work (a request's) is refused past this many calls waiting for a slot. */
  maxQueued?: number;
}

export interface SessionOptions {
  /** `exports` runs every call in the export pool; `default` in the shared one. */
  pool?: 'default' | 'exports';
  /** Aborting it removes the session's waiting call from the queue or interrupts its running one. */
  signal?: AbortSignal | undefined;
  /** Refuse (SlotsBusy) rather than queue past the pool's bound. */
  bounded?: boolean;
  /** Each call is interrupted (QueryTimeout) after this long holding its slot. */
  callTimeoutMs?: number | undefined;
}

/** What DuckDB's allocator may keep of freed memory, per thread, once a statement ends. */
export const ALLOCATOR_FLUSH_THRESHOLD = '8MB';

export class Db {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly slots: Slots,
    private readonly exportSlots: Slots,
  ) {}

  static async open(config: DuckDbConfig, spillDir: string, options: DbOptions = {}): Promise<Db> {
    fs.mkdirSync(spillDir, { recursive: true });
    // A private in-memory database: no database file is ever shared between processes (design.md).
    const instance = await DuckDBInstance.create(':memory:', {
      threads: String(config.threads),
      memory_limit: config.memoryLimit,
      temp_directory: spillDir,
      // No extension downloads at run time: the machine may be offline.
      autoinstall_known_extensions: 'false',
      // DuckDB's cache of file contents would keep what every Parquet file read left in the
      // buffer pool: a process's memory would grow with the history it reads (the files are in
      // the OS page cache anyway; measured in docs/warehouse-state.md, "How the warehouse grows").
      enable_external_file_cache: 'false',
      // Memory a statement freed goes back to the system when it ends: DuckDB's allocator would
      // keep up to 128 MB per thread (512 MB after a bulk free), and the RSS of a process that ran
      // one big statement would stay far above its memory limit. The API keeps less
      // (API_DUCKDB_ALLOCATOR_FLUSH). Measured in docs/api.md ("Exports", "Serving at scale").
      allocator_flush_threshold: config.allocatorFlushThreshold ?? ALLOCATOR_FLUSH_THRESHOLD,
      allocator_bulk_deallocation_flush_threshold: config.allocatorFlushThreshold ?? ALLOCATOR_FLUSH_THRESHOLD,
    });
    // Every timestamp is UTC, whatever the machine's zone: set once for every connection (the
    // setting needs ICU, loaded by then, so it cannot be an option of create()).
    const setup = await instance.connect();
    try {
      await setup.run(`SET GLOBAL TimeZone = 'UTC'`);
    } finally {
      setup.disconnectSync();
    }
    const maxQueued = options.maxQueued ?? Number.POSITIVE_INFINITY;
    return new Db(instance, new Slots(config.maxConcurrent, maxQueued), new Slots(options.exportSlots ?? 1, maxQueued));
  }

  /** Calls running and waiting in each pool. */
  get stats(): { default: { running: number; queued: number }; exports: { running: number; queued: number } } {
    return { default: this.slots.stats, exports: this.exportSlots.stats };
  }

  /** A session on its own connection (its own temp tables); close it when done. */
  async session(options: SessionOptions = {}): Promise<DbSession> {
    options.signal?.throwIfAborted();
    const conn = await this.instance.connect();
    return new DbSession(conn, options.pool === 'exports' ? this.exportSlots : this.slots, options);
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

const TRACE = process.env.P2PTEL_SQL_TRACE === '1';

/** With P2PTEL_SQL_TRACE=1, each statement's time and opening text on stderr (docs/operations.md). */
function trace(sql: string, startedAt: number): void {
  if (TRACE) process.stderr.write(`sql ${(performance.now() - startedAt).toFixed(0)} ms  ${sql.replace(/\s+/g, ' ').slice(0, 160)}\n`);
}

/** DuckDB's error when a statement's work does not fit in its memory limit (nothing is broken). */
export function isOutOfMemory(err: unknown): boolean {
  return err instanceof Error && /^Out of Memory Error\b/.test(err.message);
}

export class QueryTimeout extends Error {
  override name = 'QueryTimeout';
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
  ) {
    this.signal = options.signal;
    this.bounded = options.bounded ?? false;
    this.callTimeoutMs = options.callTimeoutMs;
    this.signal?.addEventListener('abort', this.onAbort, { once: true });
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
    const t0 = performance.now();
    const result = await this.call(() => this.conn.run(sql, params, types));
    trace(sql, t0);
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

  /** All rows as plain JS objects (BIGINT as bigint, timestamps as Date). */
  async all<T extends Row = Row>(sql: string, params?: SqlParams, types?: SqlTypes): Promise<T[]> {
    const t0 = performance.now();
    const reader = await this.call(() => this.conn.runAndReadAll(sql, params, types));
    trace(sql, t0);
    return reader.getRowObjectsJS() as T[];
  }

  /** All rows as one JS array per column (cheaper than row objects for many rows). */
  async columns<T extends Record<string, unknown[]>>(sql: string, params?: SqlParams, types?: SqlTypes): Promise<T> {
    const t0 = performance.now();
    const reader = await this.call(() => this.conn.runAndReadAll(sql, params, types));
    trace(sql, t0);
    return reader.getColumnsObjectJS() as unknown as T;
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
    if (ending) void ending.finally(() => this.conn.closeSync());
    else this.conn.closeSync();
  }
}

// From the project's root, not this module's folder: compiled, this code is in dist/ (bin/build.js).
const sqlDir = path.join(PROJECT_ROOT, 'warehouse', 'sql');
const sqlCache = new Map<string, string>();

/**
 * The text of `warehouse/sql/<name>.sql`. Values are bound as `$params`; the only things spliced
 * are `{{placeholders}}` filled by `fillSql` with file lists and code constants, never with input.
 */
export function sqlFile(name: string): string {
  let text = sqlCache.get(name);
  if (text === undefined) {
    // `{{@other}}` includes warehouse/sql/other.sql: a rule written once (the deduplication
    // rule) is spliced into every statement that applies it.
    text = fs
      .readFileSync(path.join(sqlDir, `${name}.sql`), 'utf8')
      .replace(/\{\{@(\w+)\}\}/g, (_m, other: string) => sqlFile(other).trim());
    sqlCache.set(name, text);
  }
  return text;
}

export function fillSql(sql: string, parts: Record<string, string>): string {
  // Placeholders are written <name> in comments, so that only real ones are filled.
  return sql.replace(/\{\{(\w+)\}\}/g, (_m, key: string) => {
    const v = parts[key];
    if (v === undefined) throw new Error(`SQL placeholder {{${key}}} has no value`);
    return v;
  });
}

/** A DuckDB list literal of quoted file paths, for `read_parquet` (file lists are resolved at prepare time). */
export function fileList(files: readonly string[]): string {
  if (files.length === 0) throw new Error('empty file list');
  return `[${files.map((f) => quotedString(f)).join(', ')}]`;
}

export { quotedIdentifier, quotedString };

/** A DuckDB TIMESTAMP for a JS date (microseconds since the epoch, UTC). */
export function timestampParam(d: Date) {
  return timestampValue(BigInt(d.getTime()) * 1000n);
}

/**
 * An empty temp table `name` with the columns and types of `query` (its rows are not computed):
 * how a step that found nothing still hands the next one a typed relation.
 */
export async function createEmptyTable(s: DbSession, name: string, query: string, params?: SqlParams, types?: SqlTypes): Promise<void> {
  await s.run(`CREATE OR REPLACE TEMP TABLE ${quotedIdentifier(name)} AS SELECT * FROM (${query}) LIMIT 0`, params, types);
}

/** The empty typed `raw_reports` of a load with no file (what load_raw.sql would give). */
export function emptyRawReportsSql(projection: string): string {
  return `SELECT NULL::VARCHAR AS filename, NULL::BIGINT AS file_row_number, ${projection}`;
}

/** Extra options of a Parquet COPY, e.g. `ROW_GROUP_SIZE 8192` (code constants only). */
export interface CopyOptions {
  rowGroupSize?: number;
  /**
   * zstd (the default: smallest files, for what is published) or snappy: several times faster to
   * write where strings dominate, for the warehouse's own intermediate files (partition states).
   */
  compression?: 'zstd' | 'snappy';
}

/** Parquet compression of the warehouse's own intermediate files (see CopyOptions). */
export const STATE_COMPRESSION = 'snappy';

/**
 * COPY a query to a Parquet file under a temporary name, fsync it, then rename it into place and
 * fsync the folder (design.md: a rename alone is atomic but not durable). Returns the rows written.
 */
export async function copyToParquet(
  s: DbSession,
  query: string,
  file: string,
  params?: SqlParams,
  types?: SqlTypes,
  options: CopyOptions = {},
): Promise<number> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  const extra = options.rowGroupSize === undefined ? '' : `, ROW_GROUP_SIZE ${Math.trunc(options.rowGroupSize)}`;
  try {
    const rows = await s.run(
      fillSql(`COPY ({{query}}) TO {{file}} (FORMAT parquet, COMPRESSION {{compression}}{{extra}})`, {
        query,
        file: quotedString(tmp),
        extra,
        compression: options.compression ?? 'zstd',
      }),
      params,
      types,
    );
    await fsyncFile(tmp);
    await fsp.rename(tmp, file);
    await fsyncDir(path.dirname(file));
    return rows;
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
}

/** BIGINT/HUGEINT results as numbers, refusing values that a double would round. */
export function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') {
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new RangeError(`integer ${v} is beyond exact double range`);
    }
    return Number(v);
  }
  if (v === null || v === undefined) return 0;
  throw new TypeError(`not a number: ${String(v)}`);
}
