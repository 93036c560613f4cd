// Values bound to a statement's $parameters: their types, and a JS date as a DuckDB TIMESTAMP.
import { timestampValue, type DuckDBType, type DuckDBValue } from '@duckdb/node-api';

export type SqlParams = Record<string, DuckDBValue>;
/** Types of parameters that cannot be inferred from their JS value (lists, maps...). */
export type SqlTypes = Record<string, DuckDBType | undefined>;

/** A DuckDB TIMESTAMP for a JS date (microseconds since the epoch, UTC). */
export function timestampParam(d: Date) {
  return timestampValue(BigInt(d.getTime()) * 1000n);
}
