// Builds the states of a batch of (customer, date) partitions: load and check their files (one
// customer at a time, the unit of the landing checks), deduplicate (every copy of a report has
// the same ts, hence the same partition), reduce to per-minute and per-hour pieces of partial
// sums and each day's series, and write one immutable state per partition (state-store.ts).
// A batch holds many partitions so that a run's fixed costs (statements, file writes) are paid
// once per batch, not once per partition.
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { TIMESTAMP, VARCHAR } from '@duckdb/node-api';
import { copyToParquet, createEmptyTable, fillSql, quotedString, sqlFile, toNumber, type DbSession } from './duckdb.ts';
import { loadCustomerReports, type LoadOutcome } from './partition-load.ts';
import { newStateId, partitionKey, stateInput, stateVersion, TMP_PREFIX, writeState, type StateMeta } from './state-store.ts';
import { STANDARD_BUCKET_SECONDS } from './windows.ts';
import { codeVersion } from '../lib/version.ts';
import type { LandedFile } from './landing.ts';
import type { WarehouseLayout } from './layout.ts';
import type { Logger } from '../lib/log.ts';

/** Series files are read one stream at a time: row groups small enough for min/max pruning. */
export const SERIES_ROW_GROUP_SIZE = 8192;

/** The series of every standard size, from the minute pieces in `state_minutes`. */
function stateSeriesSql(): string {
  const pieces = `(SELECT streamId, sessionId, start_us, reports, off, fb, peer_sum, peer_n, buf_sum, buf_n, stalls FROM state_minutes)`;
  return fillSql(sqlFile('series_combine'), { pieces });
}

/** A partition to build: its customer, date, and the landed files of it. */
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
  const customers = [...new Set(partitions.map((p) => p.customerId))].sort();
  const loads = new Map<string, LoadOutcome>();
  const scratch = path.join(ctx.layout.state, `${TMP_PREFIX}batch-${randomBytes(4).toString('hex')}`);
  try {
    // 1. Each customer's files are checked on their own (rows of another customer are a fault of
    //    the file), then gathered into one table for the rest of the batch.
    for (const customerId of customers) {
      const files = landed.filter((f) => f.customerId === customerId);
      const loaded = await loadCustomerReports({ ...ctx, customerId, log: ctx.log.child({ customerId }) }, files);
      loads.set(customerId, loaded);
      if (customers.length > 1) {
        await s.run(
          loads.size === 1
            ? `CREATE OR REPLACE TEMP TABLE batch_raw AS SELECT * FROM raw_reports`
            : `INSERT INTO batch_raw BY NAME SELECT * FROM raw_reports`,
        );
      }
    }
    if (customers.length > 1) await s.run(`DROP TABLE raw_reports; ALTER TABLE batch_raw RENAME TO raw_reports`);
    const read = await s.all<{ filename: string; n: bigint }>(`SELECT filename, count(*) AS n FROM raw_reports GROUP BY ALL`);
    // 2. Deduplicate, reduce to pieces, and each day's series of every standard size.
    await s.run(sqlFile('dedup_raw'), { as_of: null }, { as_of: TIMESTAMP });
    await s.run(`DROP TABLE raw_reports`);
    await s.run(sqlFile('state_pieces'));
    await s.run(`DROP TABLE reports`);
    await createEmptyTable(s, 'series_rows', stateSeriesSql(), { bucket_seconds: 60 });
    for (const size of STANDARD_BUCKET_SECONDS) {
      await s.run(`INSERT INTO series_rows ${stateSeriesSql()}`, { bucket_seconds: size });
    }
    // Sorted by partition, so that each partition's read below touches only its row groups.
    await s.run(
      `CREATE OR REPLACE TEMP TABLE state_series AS
       SELECT split_part(streamId, ':', 1) AS customer, * FROM series_rows ORDER BY customer, bucketStart;
       DROP TABLE series_rows;`,
    );
    const kept = await s.all<{ customer: string; date: string; n: bigint; streams: bigint }>(
      `SELECT split_part(streamId, ':', 1) AS customer, CAST(date AS VARCHAR) AS date,
              sum(reports) AS n, count(DISTINCT streamId) AS streams
       FROM state_minutes GROUP BY ALL`,
    );
    const pathOf = new Map(landed.map((f) => [f.path, f]));
    const readOf = new Map<string, number>();
    for (const r of read) {
      const f = pathOf.get(r.filename);
      if (f) readOf.set(partitionKey(f.customerId, f.date), (readOf.get(partitionKey(f.customerId, f.date)) ?? 0) + toNumber(r.n));
    }
    const keptOf = new Map(kept.map((r) => [partitionKey(r.customer, r.date), r]));

    // 3. Hour and minute pieces of every partition in one partitioned COPY each (one statement,
    //    not two per partition), into a scratch folder beside the states; each state then takes
    //    its files.
    await fs.mkdir(scratch, { recursive: true });
    const rowsOf = new Map<string, { hours: number; minutes: number }>();
    for (const grain of ['hours', 'minutes'] as const) {
      const counts = await s.all<{ customer: string; date: string; n: bigint }>(
        `SELECT split_part(streamId, ':', 1) AS customer, CAST(date AS VARCHAR) AS date, count(*) AS n FROM state_${grain} GROUP BY ALL`,
      );
      for (const c of counts) {
        const key = partitionKey(c.customer, c.date);
        rowsOf.set(key, { hours: 0, minutes: 0, ...rowsOf.get(key), [grain]: toNumber(c.n) });
      }
      await s.run(
        `COPY (SELECT *, split_part(streamId, ':', 1) AS customer FROM state_${grain} ORDER BY date, start_us)
         TO ${quotedString(path.join(scratch, grain))}
         (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (customer, date), FILENAME_PATTERN 'part-{i}', WRITE_PARTITION_COLUMNS false)`,
      );
    }
    const metas: StateMeta[] = [];
    for (const { customerId, date } of partitions) {
      const key = partitionKey(customerId, date);
      const loaded = loads.get(customerId)!;
      const files = loaded.files.filter((f) => f.date === date);
      const all = landed.filter((f) => f.customerId === customerId && f.date === date);
      const k = keptOf.get(key);
      const rowsRead = readOf.get(key) ?? 0;
      const reports = k ? toNumber(k.n) : 0;
      const rows = rowsOf.get(key) ?? { hours: 0, minutes: 0 };
      const meta: StateMeta = {
        formatVersion: 1,
        stateId: newStateId(),
        stateVersion: stateVersion(),
        codeVersion: codeVersion(),
        customerId,
        date,
        runId: ctx.runId,
        builtAt: new Date().toISOString(),
        files: files.map(stateInput),
        presentColumns: loaded.presentColumnsOf(files),
        quarantined: loaded.quarantined.filter((q) => all.some((f) => f.relPath === q.relPath)),
        rowsRead,
        reports,
        duplicatesDropped: rowsRead - reports,
        streams: k ? toNumber(k.streams) : 0,
        pieceRows: rows.hours + rows.minutes,
        seriesRows: 0,
        buildMs: 0,
      };
      await writeState(ctx.layout, meta, async (out) => {
        for (const grain of ['hours', 'minutes'] as const) {
          const written = path.join(scratch, grain, `customer=${customerId}`, `date=${date}`, 'part-0.parquet');
          if (rows[grain] > 0) await fs.rename(written, out[grain]);
          else await copyToParquet(s, `SELECT * EXCLUDE (date) FROM state_${grain} LIMIT 0`, out[grain]);
        }
        meta.seriesRows = await copyToParquet(
          s,
          `SELECT * EXCLUDE (customer) FROM state_series
           WHERE customer = $customer AND bucketStart >= CAST($date AS TIMESTAMP) AND bucketStart < CAST($date AS TIMESTAMP) + INTERVAL 1 DAY
           ORDER BY streamId, bucketSeconds, bucketStart`,
          out.series,
          { date, customer: customerId },
          { date: VARCHAR, customer: VARCHAR },
          { rowGroupSize: SERIES_ROW_GROUP_SIZE },
        );
        meta.buildMs = Date.now() - started;
      });
      metas.push(meta);
    }
    return metas;
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
    await s.run(
      `DROP TABLE IF EXISTS batch_raw; DROP TABLE IF EXISTS raw_reports; DROP TABLE IF EXISTS reports;
       DROP TABLE IF EXISTS state_minutes; DROP TABLE IF EXISTS state_hours; DROP TABLE IF EXISTS state_series; DROP TABLE IF EXISTS series_rows;`,
    );
  }
}
