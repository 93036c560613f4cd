// One in-memory DuckDB instance per process, with explicit threads, memory and spill folder,
// and a cap on DuckDB calls in flight (they run on libuv's small thread pool).
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import {
  DuckDBInstance,
  quotedIdentifier,
  quotedString,
  timestampValue,
  type DuckDBConnection,
  type DuckDBResult,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import pLimit, { type LimitFunction } from 'p-limit';
import type { DuckDbConfig } from '../lib/config.ts';
import { fsyncDir, fsyncFile } from '../lib/fsx.ts';

export type SqlParams = Record<string, DuckDBValue>;
/** Types of parameters that cannot be inferred from their JS value (lists, maps...). */
export type SqlTypes = Record<string, DuckDBType | undefined>;
export type Row = object;

export class Db {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly limit: LimitFunction,
  ) {}

  static async open(config: DuckDbConfig, spillDir: string): Promise<Db> {
    fs.mkdirSync(spillDir, { recursive: true });
    // A private in-memory database: no database file is ever shared between processes (design.md).
    const instance = await DuckDBInstance.create(':memory:', {
      threads: String(config.threads),
      memory_limit: config.memoryLimit,
      temp_directory: spillDir,
      // No extension downloads at run time: the machine may be offline.
      autoinstall_known_extensions: 'false',
    });
    return new Db(instance, pLimit(config.maxConcurrent));
  }

  /** A session on its own connection (its own temp tables); close it when done. */
  async session(): Promise<DbSession> {
    const conn = await this.instance.connect();
    const session = new DbSession(conn, this.limit);
    // Every timestamp is UTC, whatever the machine's zone.
    await session.run(`SET TimeZone = 'UTC'`);
    return session;
  }

  /** Run `fn` on a fresh session, closing it afterwards. */
  async withSession<T>(fn: (s: DbSession) => Promise<T>): Promise<T> {
    const s = await this.session();
    try {
      return await fn(s);
    } finally {
      s.close();
    }
  }

  /**
   * Like `withSession`, but the statement running when `ms` have passed is interrupted and the
   * call fails with a QueryTimeout.
   */
  async withSessionTimeout<T>(ms: number, fn: (s: DbSession) => Promise<T>): Promise<T> {
    return this.withSession(async (s) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        s.conn.interrupt();
      }, ms);
      try {
        return await fn(s);
      } catch (err) {
        if (timedOut) throw new QueryTimeout(ms);
        throw err;
      } finally {
        clearTimeout(timer);
      }
    });
  }

  close(): void {
    this.instance.closeSync();
  }
}

export class QueryTimeout extends Error {
  override name = 'QueryTimeout';
  constructor(readonly ms: number) {
    super(`query interrupted after ${ms} ms`);
  }
}

export class DbSession {
  constructor(
    readonly conn: DuckDBConnection,
    private readonly limit: LimitFunction,
  ) {}

  /** Run a statement; returns the rows it changed (for COPY: the rows written). */
  async run(sql: string, params?: SqlParams, types?: SqlTypes): Promise<number> {
    const result = await this.limit(() => this.conn.run(sql, params, types));
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

  /** A streaming result: chunks are fetched as the caller iterates, so memory stays flat. */
  async stream(sql: string, params?: SqlParams, types?: SqlTypes): Promise<DuckDBResult> {
    return this.limit(() => this.conn.stream(sql, params, types));
  }

  /** All rows as plain JS objects (BIGINT as bigint, timestamps as Date). */
  async all<T extends Row = Row>(sql: string, params?: SqlParams, types?: SqlTypes): Promise<T[]> {
    const reader = await this.limit(() => this.conn.runAndReadAll(sql, params, types));
    return reader.getRowObjectsJS() as T[];
  }

  async one<T extends Row = Row>(sql: string, params?: SqlParams, types?: SqlTypes): Promise<T> {
    const rows = await this.all<T>(sql, params, types);
    const row = rows[0];
    if (row === undefined) throw new Error('query returned no row');
    return row;
  }

  private closed = false;

  /** Close the connection (once; later calls do nothing). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.conn.closeSync();
  }
}

const sqlDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'sql');
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
}

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
      fillSql(`COPY ({{query}}) TO {{file}} (FORMAT parquet, COMPRESSION zstd{{extra}})`, { query, file: quotedString(tmp), extra }),
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
