// Builds the states of a batch of one customer's (customer, date) partitions: load and check
// their files once, deduplicate (every copy of a report has the same ts, hence the same
// partition), reduce to per-minute and per-hour pieces of partial sums and the day's series,
// and write one immutable state per date (state-store.ts).
import { TIMESTAMP, VARCHAR } from '@duckdb/node-api';
import { copyToParquet, fillSql, sqlFile, toNumber, type DbSession } from './duckdb.ts';
import { loadCustomerReports } from './partition-load.ts';
import { newStateId, stateInput, stateVersion, writeState, type StateMeta } from './state-store.ts';
import { STANDARD_BUCKET_SECONDS } from './windows.ts';
import { codeVersion } from '../lib/version.ts';
import type { LandedFile } from './landing.ts';
import type { WarehouseLayout } from './layout.ts';
import type { Logger } from '../lib/log.ts';

/** Series files are read one stream at a time: row groups small enough for min/max pruning. */
export const SERIES_ROW_GROUP_SIZE = 8192;

/** The day's series of every standard size, from the minute pieces in `state_minutes`. */
function stateSeriesSql(): string {
  const pieces = `(SELECT streamId, sessionId, start_us, reports, off, fb, peer_sum, peer_n, buf_sum, buf_n, stalls FROM state_minutes)`;
  return fillSql(sqlFile('series_combine'), { pieces });
}

export async function buildPartitionStates(
  ctx: { s: DbSession; layout: WarehouseLayout; customerId: string; runId: string; log: Logger },
  /** The dates to build; each gets a state, empty when all its files were quarantined. */
  dates: readonly string[],
  /** The landed files of those dates. */
  landed: readonly LandedFile[],
): Promise<StateMeta[]> {
  const { s } = ctx;
  const started = Date.now();
  const loaded = await loadCustomerReports(ctx, landed);
  try {
    const read = await s.all<{ date: string; n: bigint }>(
      `SELECT CAST(CAST(ts AS DATE) AS VARCHAR) AS date, count(*) AS n FROM raw_reports GROUP BY ALL`,
    );
    await s.run(sqlFile('dedup_raw'), { as_of: null }, { as_of: TIMESTAMP });
    const kept = await s.all<{ date: string; n: bigint; streams: bigint }>(
      `SELECT CAST(CAST(ts AS DATE) AS VARCHAR) AS date, count(*) AS n, count(DISTINCT streamId) AS streams FROM reports GROUP BY ALL`,
    );
    await s.run(sqlFile('state_pieces'));
    await s.run(`CREATE OR REPLACE TEMP TABLE state_series AS SELECT * FROM (${stateSeriesSql()}) LIMIT 0`, { bucket_seconds: 60 });
    for (const size of STANDARD_BUCKET_SECONDS) {
      await s.run(`INSERT INTO state_series ${stateSeriesSql()}`, { bucket_seconds: size });
    }
    const readOf = new Map(read.map((r) => [r.date, toNumber(r.n)]));
    const keptOf = new Map(kept.map((r) => [r.date, r]));
    const metas: StateMeta[] = [];
    for (const date of dates) {
      const files = loaded.files.filter((f) => f.date === date);
      const all = landed.filter((f) => f.date === date);
      const stateId = newStateId();
      const k = keptOf.get(date);
      const rowsRead = readOf.get(date) ?? 0;
      const reports = k ? toNumber(k.n) : 0;
      const meta: StateMeta = {
        formatVersion: 1,
        stateId,
        stateVersion: stateVersion(),
        codeVersion: codeVersion(),
        customerId: ctx.customerId,
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
        pieceRows: 0,
        seriesRows: 0,
        buildMs: 0,
      };
      await writeState(ctx.layout, meta, async (out) => {
        const params = { date };
        const types = { date: VARCHAR };
        meta.pieceRows = await copyToParquet(
          s,
          `SELECT * EXCLUDE (date) FROM state_pieces WHERE date = CAST($date AS DATE) ORDER BY grain DESC, start_us, streamId, sessionId, at_start`,
          out.pieces,
          params,
          types,
        );
        meta.seriesRows = await copyToParquet(
          s,
          `SELECT * FROM state_series WHERE CAST(bucketStart AS DATE) = CAST($date AS DATE) ORDER BY streamId, bucketSeconds, bucketStart`,
          out.series,
          params,
          types,
          { rowGroupSize: SERIES_ROW_GROUP_SIZE },
        );
        meta.buildMs = Date.now() - started;
      });
      metas.push(meta);
    }
    return metas;
  } finally {
    await s.run(
      `DROP TABLE IF EXISTS raw_reports; DROP TABLE IF EXISTS reports; DROP TABLE IF EXISTS state_minutes;
       DROP TABLE IF EXISTS state_pieces; DROP TABLE IF EXISTS state_series;`,
    );
  }
}
