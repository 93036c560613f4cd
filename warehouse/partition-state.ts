// Builds the states of a batch of (customer, date) partitions: check their files (all of the
// batch at once, each against the partition folder it lies in), deduplicate (every copy of a
// report has the same ts, hence the same partition), reduce to per-hour pieces of partial sums and
// each day's series, and write one immutable state per partition (state-store.ts).
// The files are read twice, both times straight from Parquet and only the columns needed: once
// for the deduplication rule (reportId, file and row), once into minute pieces; nothing the size
// of the reports is materialised. A batch holds many partitions so that a run's fixed costs
// (statements, file writes, fsyncs) are paid once per batch, not once per partition.
import type { DbSession } from './duckdb/session.ts';
import { fileList, fillSql, quotedString, sqlFile } from './sql-files.ts';
import { STATE_COMPRESSION } from './parquet-write.ts';
import { createEmptyTable, emptyRawReportsSql } from './empty-relations.ts';
import { isFileError, type LandedFile } from './landing.ts';
import { loadSql, quarantineUnreadable, screenFiles, type LoadOutcome } from './partition-load.ts';
import { STATE_COLUMNS } from './report-columns.ts';
import { projectionSql } from './report-projection.ts';
import { newStateId, partitionKey, stateInput, stateVersion, writeStates, type StateMeta, type StateToWrite } from './state-store.ts';
import { MIN_BUCKET_SECONDS, STANDARD_BUCKET_SECONDS } from './windows.ts';
import { codeVersion } from '../lib/version.ts';
import type { WarehouseLayout } from './layout.ts';
import type { Logger } from '../lib/log.ts';

/** Series files are read one stream at a time: row groups small enough for min/max pruning. */
export const SERIES_ROW_GROUP_SIZE = 8192;

/** A partition to build: its customer and date. */
export interface PartitionToBuild {
  customerId: string;
  date: string;
}

export async function buildPartitionStates(
  ctx: { s: DbSession; layout: WarehouseLayout; runId: string; log: Logger },
  /** The partitions to build; each gets a state, empty when all its files were quarantined. */
  partitions: readonly PartitionToBuild[],
  /** The landed files of those partitions. */
  landed: readonly LandedFile[],
): Promise<StateMeta[]> {
  const { s } = ctx;
  const started = Date.now();
  let load: LoadOutcome;
  try {
    // 1. The files are checked (schemas, then every row rule, validate-rows.ts), each against the
    //    partition folder it lies in: rows of another customer or date are a fault of the file.
    load = await screenFiles(ctx, landed);
    // 2. Deduplicate and reduce to minute and hour pieces, reading the files where they lie. A
    //    file whose data pages are broken shows only when read: then each file is read alone, the
    //    culprits quarantined, and the batch read again.
    for (;;) {
      try {
        await piecesFrom(s, load.files, new Set(load.presentColumns));
        break;
      } catch (err) {
        if (!isFileError(err)) throw err;
        ctx.log.warn({ err: (err as Error).message.split('\n')[0] }, 'bulk read failed; reading files one by one');
        const current: LoadOutcome = load;
        const checked = await quarantineUnreadable(ctx, current.files, (f) => new Set(current.presentColumnsOf([f])), STATE_COLUMNS);
        if (checked.files.length === current.files.length) throw err; // not a file's fault: let the run fail and be retried
        const files = checked.files;
        load = {
          files,
          quarantined: [...current.quarantined, ...checked.quarantined],
          presentColumns: current.presentColumnsOf(files),
          presentColumnsOf: current.presentColumnsOf,
          schemaOf: current.schemaOf,
        };
      }
    }
    // 3. Each day's series of every standard size: the minute pieces are the 60 s session
    //    buckets; each larger size sums the buckets of the one before it.
    const sizes = [...STANDARD_BUCKET_SECONDS].sort((a, b) => a - b);
    const seriesOf = (buckets: string) => `WITH session_buckets AS (SELECT * FROM ${buckets}) ${sqlFile('series_of_buckets')}`;
    let finer = 'state_minutes';
    await createEmptyTable(s, 'series_rows', seriesOf(finer), { bucket_seconds: 60 });
    for (const size of sizes) {
      let buckets = finer;
      if (size !== MIN_BUCKET_SECONDS) {
        buckets = `session_buckets_${size}`;
        await s.run(`CREATE OR REPLACE TEMP TABLE ${buckets} AS ${fillSql(sqlFile('session_buckets'), { pieces: finer })}`, { bucket_seconds: size });
        await s.run(`DROP TABLE ${finer}`);
      }
      await s.run(`INSERT INTO series_rows ${seriesOf(buckets)}`, { bucket_seconds: size });
      finer = buckets;
    }
    await s.run(`DROP TABLE ${finer}`);
    // Series sorted as each state's file is (stream, size, time), by partition first: each
    // partition's rows are then one contiguous run that its COPY reads in order, with no sort of
    // its own. Hour pieces need no order (they are read whole).
    await s.run(
      `CREATE OR REPLACE TEMP TABLE state_series AS
       SELECT split_part(streamId, ':', 1) AS customer, CAST(bucketStart AS DATE) AS date, *
       FROM series_rows ORDER BY customer, date, streamId, bucketSeconds, bucketStart;
       DROP TABLE series_rows;`,
    );
    const figures = await s.all<{ customer: string; date: string; n: number; streams: number; max_ts: string | null; hours: number }>(
      `SELECT customer, CAST(date AS VARCHAR) AS date, sum(reports) AS n, count(DISTINCT streamId) AS streams,
              strftime(max(last_ts), '%Y-%m-%dT%H:%M:%S.%fZ') AS max_ts, count(*) AS hours
       FROM state_hours GROUP BY ALL`,
    );
    const read = await s.all<{ filename: string; n: number }>(`SELECT filename, n FROM batch_files_read`);
    const pathOf = new Map(landed.map((f) => [f.path, f]));
    const readOf = new Map<string, number>();
    for (const r of read) {
      const f = pathOf.get(r.filename);
      if (f) readOf.set(partitionKey(f.customerId, f.date), (readOf.get(partitionKey(f.customerId, f.date)) ?? 0) + r.n);
    }
    const figuresOf = new Map(figures.map((r) => [partitionKey(r.customer, r.date), r]));

    // 4. One state per partition: its hour pieces and its day's series, each a contiguous run of
    //    the sorted tables.
    const toWrite: StateToWrite[] = [];
    for (const { customerId, date } of partitions) {
      const key = partitionKey(customerId, date);
      const files = load.files.filter((f) => f.customerId === customerId && f.date === date);
      const all = landed.filter((f) => f.customerId === customerId && f.date === date);
      const k = figuresOf.get(key);
      const rowsRead = readOf.get(key) ?? 0;
      const reports = k?.n ?? 0;
      const meta: StateMeta = {
        formatVersion: 1,
        stateId: newStateId(),
        stateVersion: stateVersion(),
        codeVersion: codeVersion(),
        customerId,
        date,
        runId: ctx.runId,
        builtAt: new Date().toISOString(),
        files: files.map((f) => stateInput(f, load.schemaOf(f))),
        presentColumns: load.presentColumnsOf(files),
        quarantined: load.quarantined.filter((q) => all.some((f) => f.relPath === q.relPath)),
        rowsRead,
        reports,
        duplicatesDropped: rowsRead - reports,
        streams: k?.streams ?? 0,
        maxTs: k?.max_ts ?? null,
        hourRows: k?.hours ?? 0,
        seriesRows: 0,
        buildMs: 0,
      };
      toWrite.push({
        meta,
        write: async (out) => {
          const where = `customer = ${quotedString(customerId)} AND date = DATE ${quotedString(date)}`;
          await s.run(`COPY (SELECT * EXCLUDE (customer, date) FROM state_hours WHERE ${where}) TO ${quotedString(out.hours)} (FORMAT parquet, COMPRESSION ${STATE_COMPRESSION})`);
          meta.seriesRows = await s.run(
            `COPY (SELECT * EXCLUDE (customer, date) FROM state_series WHERE ${where})
             TO ${quotedString(out.series)} (FORMAT parquet, COMPRESSION ${STATE_COMPRESSION}, ROW_GROUP_SIZE ${SERIES_ROW_GROUP_SIZE})`,
          );
          meta.buildMs = Date.now() - started;
        },
      });
    }
    await writeStates(ctx.layout, toWrite);
    return toWrite.map((w) => w.meta);
  } finally {
    await dropRelations(s, [
      'reports', 'raw_reports', 'dedup_dropped', 'batch_files_read', 'state_minutes', 'state_hours',
      'state_series', 'series_rows', ...STANDARD_BUCKET_SECONDS.map((size) => `session_buckets_${size}`),
    ]);
  }
}

/**
 * `state_minutes` and `state_hours` (state_pieces.sql) from `files`, deduplicated by the one rule
 * (dedup_reports.sql), and `batch_files_read` (rows read per file). No file: empty tables.
 */
async function piecesFrom(s: DbSession, files: readonly LandedFile[], present: ReadonlySet<string>): Promise<void> {
  if (files.length === 0) {
    // The same relation, over no rows: every column at its type.
    await s.run(`CREATE OR REPLACE TEMP VIEW raw_reports AS ${emptyRawReportsSql(projectionSql(STATE_COLUMNS, new Set()))} LIMIT 0`);
    await s.run(`CREATE OR REPLACE TEMP TABLE batch_files_read AS SELECT NULL::VARCHAR AS filename, 0::BIGINT AS n WHERE false`);
  } else {
    await s.run(loadSql(files, present, STATE_COLUMNS, 'VIEW'));
    // Rows per file, from the files' footers.
    await s.run(
      `CREATE OR REPLACE TEMP TABLE batch_files_read AS
       SELECT file_name AS filename, CAST(num_rows AS BIGINT) AS n FROM parquet_file_metadata(${fileList(files.map((f) => f.path))})`,
    );
  }
  await s.run(
    `CREATE OR REPLACE TEMP TABLE dedup_dropped AS
     WITH dedup_input AS (SELECT reportId, filename, file_row_number FROM raw_reports),
     ${sqlFile('dedup_reports')}
     SELECT * FROM dedup_dropped;
     CREATE OR REPLACE TEMP VIEW reports AS
     SELECT * EXCLUDE (filename, file_row_number) FROM raw_reports ANTI JOIN dedup_dropped USING (filename, file_row_number);`,
  );
  await s.run(sqlFile('state_pieces'));
}

/** Drop temporary tables or views by name, whichever each is (a failed batch may leave either). */
async function dropRelations(s: DbSession, names: readonly string[]): Promise<void> {
  for (const name of names) {
    await s.run(`DROP TABLE IF EXISTS ${name}`).catch(() => s.run(`DROP VIEW IF EXISTS ${name}`));
  }
}
