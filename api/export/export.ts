// GET /telemetry/export bodies: one stream's deduplicated reports in a window, as CSV, NDJSON,
// Parquet or an Arrow IPC stream, streamed from DuckDB chunk by chunk (Parquet through a
// temporary file that DuckDB writes), so that server memory stays flat whatever the size.
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { TIMESTAMP, type DuckDBResult } from '@duckdb/node-api';
import { fileList, fillSql, quotedString, sqlFile, type Db, type DbSession, type SqlParams } from '../../warehouse/duckdb.ts';
import { projectionSql, REPORT_COLUMNS } from '../../warehouse/report-columns.ts';
import { timestampParam } from '../../warehouse/partition-rollup.ts';
import { parseStreamId } from '../../warehouse/ids.ts';
import { windowSeconds, type WindowName } from '../../warehouse/windows.ts';
import type { WarehouseLayout } from '../../warehouse/layout.ts';
import type { ServedSnapshot } from '../snapshot-store.ts';
import { arrowStream } from './arrow.ts';
import { CSV_HEADER, CSV_LINE_SQL, NDJSON_LINE_SQL } from './lines.ts';

export const EXPORT_FORMATS = ['csv', 'ndjson', 'parquet', 'arrow'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_MEDIA: Record<ExportFormat, { type: string; ext: string }> = {
  csv: { type: 'text/csv; charset=utf-8', ext: 'csv' },
  ndjson: { type: 'application/x-ndjson', ext: 'ndjson' },
  parquet: { type: 'application/vnd.apache.parquet', ext: 'parquet' },
  arrow: { type: 'application/vnd.apache.arrow.stream', ext: 'arrows' },
};

const ALL_COLUMNS = REPORT_COLUMNS.map((c) => c.name);

/** The attachment's file name: customer, stream name and window, safe in any file system. */
export function exportFileName(streamId: string, window: WindowName, format: ExportFormat): string {
  const id = parseStreamId(streamId);
  const base = id ? `${id.customerId}_${id.name}` : 'export';
  return `${base}_${window}.${EXPORT_MEDIA[format].ext}`;
}

function exportQuery(snap: ServedSnapshot, layout: WarehouseLayout, streamId: string, window: WindowName): { sql: string; params: SqlParams } {
  const customerId = parseStreamId(streamId)?.customerId;
  const inputs = customerId ? snap.customerInputs(layout, customerId) : null;
  const seconds = windowSeconds(window);
  const params: SqlParams = {
    stream_id: streamId,
    as_of: timestampParam(new Date(snap.asOfMs)),
    lower: seconds === null ? null : timestampParam(new Date(snap.asOfMs - seconds * 1000)),
  };
  if (!inputs || inputs.files.length === 0) {
    return { sql: `SELECT ${projectionSql(ALL_COLUMNS, new Set())} WHERE $stream_id IS NULL AND $as_of IS NULL AND $lower IS NULL`, params };
  }
  return {
    sql: fillSql(sqlFile('export_reports'), {
      files: fileList(inputs.files),
      projection: projectionSql(ALL_COLUMNS, new Set(inputs.presentColumns)),
    }),
    params,
  };
}

const TYPES = { as_of: TIMESTAMP, lower: TIMESTAMP };

async function* lines(result: DuckDBResult, header: string | null): AsyncGenerator<Buffer> {
  if (header) yield Buffer.from(header);
  for await (const chunk of result) {
    const values = chunk.getColumnValues(0) as string[];
    if (values.length > 0) yield Buffer.from(`${values.join('\n')}\n`);
  }
}

/** Run `body` over a session that is closed when the stream ends, fails or is abandoned. */
function sessionStream(s: DbSession, body: AsyncGenerator<Buffer>): Readable {
  async function* owned(): AsyncGenerator<Buffer> {
    try {
      yield* body;
    } finally {
      s.close();
    }
  }
  return Readable.from(owned(), { objectMode: false, highWaterMark: 1 << 16 });
}

/**
 * Start the export and return its body. The query is started before this resolves, so that a
 * failure still becomes an error response rather than a cut-off download.
 */
export async function startExport(
  db: Db,
  layout: WarehouseLayout,
  snap: ServedSnapshot,
  streamId: string,
  window: WindowName,
  format: ExportFormat,
): Promise<Readable> {
  const { sql, params } = exportQuery(snap, layout, streamId, window);
  const s = await db.session();
  try {
    switch (format) {
      case 'csv':
        return sessionStream(s, lines(await s.stream(`SELECT ${CSV_LINE_SQL} AS line FROM (${sql})`, params, TYPES), CSV_HEADER));
      case 'ndjson':
        return sessionStream(s, lines(await s.stream(`SELECT ${NDJSON_LINE_SQL} AS line FROM (${sql})`, params, TYPES), null));
      case 'arrow':
        return sessionStream(s, arrowStream(await s.stream(sql, params, TYPES)));
      case 'parquet': {
        // Parquet needs its footer last: DuckDB writes a temporary file, which is streamed, then removed.
        await fs.promises.mkdir(layout.tmp, { recursive: true });
        const tmp = path.join(layout.tmp, `export-${process.pid}-${randomBytes(6).toString('hex')}`);
        try {
          await s.run(`COPY (${sql}) TO ${quotedString(tmp)} (FORMAT parquet, COMPRESSION zstd)`, params, TYPES);
        } catch (err) {
          await fs.promises.rm(tmp, { force: true });
          throw err;
        }
        s.close();
        const file = fs.createReadStream(tmp, { highWaterMark: 1 << 16 });
        file.once('close', () => void fs.promises.rm(tmp, { force: true }));
        return file;
      }
    }
  } catch (err) {
    s.close();
    throw err;
  }
}
