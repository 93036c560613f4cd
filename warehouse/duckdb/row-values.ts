// The one converter of result values to JS: @duckdb/node-api's own (JSDuckDBValueConverter:
// DOUBLE and DECIMAL as numbers, TIMESTAMP and DATE as Dates, VARCHAR as strings, lists, structs
// and maps), except that integers wider than 32 bits (BIGINT, HUGEINT, their unsigned kinds,
// BIGNUM) come as numbers too, rather than bigints. A value that a double would round is refused
// (RangeError), never rounded: figures are exact.
import { DuckDBTypeId, JSDuckDBValueConverter, type DuckDBValueConverter, type JS } from '@duckdb/node-api';

const WIDE_INTEGERS: ReadonlySet<DuckDBTypeId> = new Set([
  DuckDBTypeId.BIGINT,
  DuckDBTypeId.UBIGINT,
  DuckDBTypeId.HUGEINT,
  DuckDBTypeId.UHUGEINT,
  DuckDBTypeId.BIGNUM,
]);
const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

function exactNumber(v: bigint): number {
  if (v > MAX_EXACT || v < -MAX_EXACT) throw new RangeError(`integer ${v} is beyond exact double range`);
  return Number(v);
}

export const rowValues: DuckDBValueConverter<JS> = (value, type, converter) =>
  typeof value === 'bigint' && WIDE_INTEGERS.has(type.typeId) ? exactNumber(value) : JSDuckDBValueConverter(value, type, converter);
