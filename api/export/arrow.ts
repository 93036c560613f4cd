// Arrow IPC stream export: DuckDB result chunks become Arrow record batches with the types of
// docs/metrics.md (maps as Arrow maps, ts as microsecond timestamps in UTC), written in bounded
// batches, each pulled only when the client has taken the previous one (back-pressure), so that
// memory stays flat whatever the export's size.
import { AsyncByteQueue, Field, RecordBatch, RecordBatchStreamWriter, Schema, Struct, makeData } from 'apache-arrow';
import type { DuckDBDataChunk, DuckDBValue } from '@duckdb/node-api';
import { REPORT_COLUMNS } from '../../warehouse/session-reports/index.ts';
import { arrowData, arrowTypeOf } from './arrow-columns.ts';

const SCHEMA = new Schema(REPORT_COLUMNS.map((c) => new Field(c.name, arrowTypeOf(c), !c.required)));

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The SELECT list an Arrow export reads its rows with: strings as their UTF-8 bytes and
 * timestamps as microseconds, the forms Arrow stores, with no conversion through JS values.
 */
export const ARROW_COLUMNS_SQL = REPORT_COLUMNS.map((c) => {
  const id = ident(c.name);
  if (c.type === 'VARCHAR') return `encode(${id}) AS ${id}`;
  if (c.type === 'TIMESTAMP') return `epoch_us(${id}) AS ${id}`;
  return id;
}).join(', ');

/** Columns read from a chunk between two turns of the event loop. */
const COLUMNS_PER_SLICE = 6;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function batchOf(columns: DuckDBValue[][], rows: number): RecordBatch {
  const children = REPORT_COLUMNS.map((c, i) => arrowData(c, columns[i]!));
  return new RecordBatch(SCHEMA, makeData({ type: new Struct(SCHEMA.fields), length: rows, nullCount: 0, children }));
}

/** Bytes of an Arrow IPC stream made from `chunks` (DuckDB chunks of the export query, in column order). */
export async function* arrowStream(chunks: AsyncIterable<DuckDBDataChunk>, rowsPerBatch = 2048): AsyncGenerator<Buffer> {
  const pending: Buffer[] = [];
  // The writer's byte queue, drained after each batch: the IPC bytes leave as they are made.
  class Collect extends AsyncByteQueue {
    override write(chunk: Uint8Array | ArrayBufferView | ArrayBuffer) {
      pending.push(Buffer.from(chunk instanceof Uint8Array ? chunk : new Uint8Array(chunk as ArrayBuffer)));
    }
  }
  const writer = new RecordBatchStreamWriter();
  writer.reset(new Collect() as unknown as AsyncByteQueue, SCHEMA);
  let columns: DuckDBValue[][] = REPORT_COLUMNS.map(() => []);
  let rows = 0;
  for await (const chunk of chunks) {
    // Reading a chunk's values into JS is the main thread's largest cost (tens of µs a row for
    // strings and maps): done a few columns at a time, with other requests served in between.
    for (let i = 0; i < REPORT_COLUMNS.length; i++) {
      const col = columns[i]!;
      for (const v of chunk.getColumnVector(i).toArray()) col.push(v);
      if (i % COLUMNS_PER_SLICE === COLUMNS_PER_SLICE - 1) await nextTurn();
    }
    rows += chunk.rowCount;
    if (rows >= rowsPerBatch) {
      writer.write(batchOf(columns, rows));
      columns = REPORT_COLUMNS.map(() => []);
      rows = 0;
      yield Buffer.concat(pending.splice(0));
      // Building a batch is main-thread work: let other requests run between batches.
      await nextTurn();
    }
  }
  if (rows > 0) writer.write(batchOf(columns, rows));
  writer.finish();
  if (pending.length > 0) yield Buffer.concat(pending.splice(0));
}
