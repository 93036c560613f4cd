// Arrow IPC stream export: DuckDB result chunks become Arrow record batches with the types of
// session-report.md (maps as Arrow maps, ts as microsecond timestamps in UTC), written batch by
// batch so that memory stays flat whatever the export's size.
import {
  AsyncByteQueue,
  Bool,
  Field,
  Float64,
  Int32,
  Int64,
  Map_,
  RecordBatchStreamWriter,
  Struct,
  Table,
  TimestampMicrosecond,
  Utf8,
  makeData,
  makeVector,
  vectorFromArray,
  type DataType,
  type Vector,
} from 'apache-arrow';
import { DuckDBMapValue, DuckDBTimestampValue, type DuckDBDataChunk, type DuckDBValue } from '@duckdb/node-api';
import { REPORT_COLUMNS, type ReportColumn } from '../../warehouse/report-columns.ts';

function arrowType(c: ReportColumn): DataType {
  const mapOf = <V extends Int32 | Int64>(value: V) =>
    new Map_<Utf8, V>(new Field('entries', new Struct<{ key: Utf8; value: V }>([new Field('key', new Utf8(), false), new Field('value', value, true)])), false);
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
      return mapOf(new Int32());
    case 'MAP(VARCHAR, BIGINT)':
      return mapOf(new Int64());
    default:
      throw new Error(`no Arrow type for ${c.type}`);
  }
}

const TYPES = REPORT_COLUMNS.map(arrowType);

function toJs(v: DuckDBValue): unknown {
  if (v instanceof DuckDBMapValue) return new Map(v.entries.map((e) => [String(e.key), toJs(e.value)]));
  return v;
}

function column(i: number, values: DuckDBValue[]): Vector {
  const c = REPORT_COLUMNS[i]!;
  const type = TYPES[i]!;
  if (c.family === 'timestamp') {
    // Microseconds as they are: the builder's path goes through milliseconds as doubles.
    const micros = BigInt64Array.from(values, (v) => (v instanceof DuckDBTimestampValue ? v.micros : 0n));
    return makeVector(makeData({ type: type as TimestampMicrosecond, data: micros, length: micros.length, nullCount: 0 }));
  }
  return vectorFromArray(values.map(toJs), type);
}

/** Bytes of an Arrow IPC stream made from `chunks` (DuckDB chunks of the export query, in column order). */
export async function* arrowStream(chunks: AsyncIterable<DuckDBDataChunk>, rowsPerBatch = 16_384): AsyncGenerator<Buffer> {
  const pending: Buffer[] = [];
  class Collect extends AsyncByteQueue {
    override write(chunk: Uint8Array | ArrayBufferView | ArrayBuffer) {
      pending.push(Buffer.from(chunk instanceof Uint8Array ? chunk : new Uint8Array(chunk as ArrayBuffer)));
    }
  }
  const writer = new RecordBatchStreamWriter();
  writer.reset(new Collect() as unknown as AsyncByteQueue);
  let columns: DuckDBValue[][] = REPORT_COLUMNS.map(() => []);
  let rows = 0;
  let wrote = false;
  const flush = function* (): Generator<Buffer> {
    const table = new Table(Object.fromEntries(REPORT_COLUMNS.map((c, i) => [c.name, column(i, columns[i]!)])));
    for (const batch of table.batches) writer.write(batch);
    wrote = true;
    columns = REPORT_COLUMNS.map(() => []);
    rows = 0;
    if (pending.length > 0) yield Buffer.concat(pending.splice(0));
  };
  for await (const chunk of chunks) {
    const cols = chunk.getColumns();
    cols.forEach((values, i) => columns[i]!.push(...values));
    rows += chunk.rowCount;
    if (rows >= rowsPerBatch) yield* flush();
  }
  if (rows > 0 || !wrote) yield* flush();
  writer.finish();
  if (pending.length > 0) yield Buffer.concat(pending.splice(0));
}
