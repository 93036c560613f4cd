// Arrow column data built straight from DuckDB values into Arrow's buffers (values, offsets,
// validity bitmaps), rather than through apache-arrow's per-value builders; strings arrive as
// their UTF-8 bytes and timestamps as integers, so nothing is decoded only to be encoded again.
import {
  Bool,
  Field,
  Float64,
  Int32,
  Int64,
  Map_,
  Struct,
  TimestampMicrosecond,
  Utf8,
  makeData,
  type Data,
  type DataType,
} from 'apache-arrow';
import { DuckDBBlobValue, DuckDBMapValue, DuckDBTimestampValue, type DuckDBValue } from '@duckdb/node-api';
import type { ReportColumn } from '../../warehouse/session-reports/index.ts';

const encoder = new TextEncoder();

/** Validity bitmap (LSB first) and null count of `values`. */
function validity(values: readonly unknown[]): { nullBitmap: Uint8Array; nullCount: number } {
  const nullBitmap = new Uint8Array((values.length + 7) >> 3);
  let nullCount = 0;
  for (let i = 0; i < values.length; i++) {
    if (values[i] === null || values[i] === undefined) nullCount++;
    else nullBitmap[i >> 3]! |= 1 << (i & 7);
  }
  return { nullBitmap, nullCount };
}

const EMPTY = new Uint8Array(0);

/** Utf8 data from strings, or from their UTF-8 bytes as DuckDB hands them over (`encode(col)`). */
function utf8(values: readonly (string | DuckDBBlobValue | null)[]): Data<Utf8> {
  const valueOffsets = new Int32Array(values.length + 1);
  const encoded: Uint8Array[] = new Array(values.length);
  let total = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const bytes = v === null || v === undefined ? EMPTY : v instanceof DuckDBBlobValue ? v.bytes : encoder.encode(v);
    encoded[i] = bytes;
    total += bytes.length;
    valueOffsets[i + 1] = total;
  }
  const data = new Uint8Array(total);
  for (let i = 0; i < values.length; i++) data.set(encoded[i]!, valueOffsets[i]!);
  return makeData({ type: new Utf8(), length: values.length, ...validity(values), valueOffsets, data });
}

function int32(values: readonly (number | null)[]): Data<Int32> {
  return makeData({ type: new Int32(), length: values.length, ...validity(values), data: Int32Array.from(values, (v) => v ?? 0) });
}

function int64(values: readonly (bigint | number | null)[]): Data<Int64> {
  return makeData({ type: new Int64(), length: values.length, ...validity(values), data: BigInt64Array.from(values, (v) => BigInt(v ?? 0)) });
}

function float64(values: readonly (number | null)[]): Data<Float64> {
  return makeData({ type: new Float64(), length: values.length, ...validity(values), data: Float64Array.from(values, (v) => v ?? 0) });
}

function bool(values: readonly (boolean | null)[]): Data<Bool> {
  const data = new Uint8Array((values.length + 7) >> 3);
  values.forEach((v, i) => {
    if (v) data[i >> 3]! |= 1 << (i & 7);
  });
  return makeData({ type: new Bool(), length: values.length, ...validity(values), data });
}

/** Microsecond timestamps from DuckDB timestamps or their `epoch_us` integers. */
function timestampMicros(values: readonly DuckDBValue[]): Data<TimestampMicrosecond> {
  const data = BigInt64Array.from(values, (v) => (v instanceof DuckDBTimestampValue ? v.micros : typeof v === 'bigint' ? v : 0n));
  return makeData({ type: new TimestampMicrosecond('UTC'), length: values.length, ...validity(values), data });
}

export function mapType<V extends Int32 | Int64>(value: V): Map_<Utf8, V> {
  return new Map_<Utf8, V>(new Field('entries', new Struct<{ key: Utf8; value: V }>([new Field('key', new Utf8(), false), new Field('value', value, true)])), false);
}

function map<V extends Int32 | Int64>(values: readonly DuckDBValue[], valueType: V): Data<Map_<Utf8, V>> {
  const type = mapType(valueType);
  const valueOffsets = new Int32Array(values.length + 1);
  const keys: (string | null)[] = [];
  const vals: (number | bigint | null)[] = [];
  values.forEach((v, i) => {
    if (v instanceof DuckDBMapValue) {
      for (const e of v.entries) {
        keys.push(e.key as string);
        vals.push(e.value as number | bigint | null);
      }
    }
    valueOffsets[i + 1] = keys.length;
  });
  const valueData = valueType instanceof Int64 ? int64(vals) : int32(vals as (number | null)[]);
  const entries = makeData({ type: type.children[0]!.type, length: keys.length, nullCount: 0, children: [utf8(keys), valueData] });
  return makeData({ type, length: values.length, ...validity(values), valueOffsets, child: entries }) as Data<Map_<Utf8, V>>;
}

/** The Arrow type of a contract column. */
export function arrowTypeOf(c: ReportColumn): DataType {
  switch (c.type) {
    case 'VARCHAR':
      return new Utf8();
    case 'INTEGER':
      return new Int32();
    case 'BIGINT':
      return new Int64();
    case 'DOUBLE':
      return new Float64();
    case 'BOOLEAN':
      return new Bool();
    case 'TIMESTAMP':
      return new TimestampMicrosecond('UTC');
    case 'MAP(VARCHAR, INTEGER)':
      return mapType(new Int32());
    case 'MAP(VARCHAR, BIGINT)':
      return mapType(new Int64());
    default:
      throw new Error(`no Arrow type for ${c.type}`);
  }
}

/** Arrow data of one column from the DuckDB values of a run of rows. */
export function arrowData(c: ReportColumn, values: DuckDBValue[]): Data {
  switch (c.type) {
    case 'VARCHAR':
      return utf8(values as (string | DuckDBBlobValue | null)[]);
    case 'INTEGER':
      return int32(values as (number | null)[]);
    case 'BIGINT':
      return int64(values as (bigint | null)[]);
    case 'DOUBLE':
      return float64(values as (number | null)[]);
    case 'BOOLEAN':
      return bool(values as (boolean | null)[]);
    case 'TIMESTAMP':
      return timestampMicros(values);
    case 'MAP(VARCHAR, INTEGER)':
      return map(values, new Int32());
    case 'MAP(VARCHAR, BIGINT)':
      return map(values, new Int64());
    default:
      throw new Error(`no Arrow data for ${c.type}`);
  }
}
