// Query results written as Parquet files, durably: under a temporary name, fsynced, then renamed
// into place (docs/architecture.md: a rename alone is atomic but not durable).
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fsyncDir, fsyncFile } from '../../lib/fsx.ts';
import type { SqlParams, SqlTypes } from './param-values.ts';
import type { DbSession } from './session.ts';
import { fillSql, quotedString } from './sql-text.ts';

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
 * fsync the folder (docs/architecture.md: a rename alone is atomic but not durable). Returns the rows written.
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
