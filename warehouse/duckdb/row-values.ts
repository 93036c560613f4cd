// How DuckDB's values reach JS.

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
