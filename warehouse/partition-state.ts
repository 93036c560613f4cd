// Builds the states of a batch of one customer's (customer, date) partitions: load and check
// their files once, deduplicate (every copy of a report has the same ts, hence the same
// partition), reduce to per-minute and per-hour pieces of partial sums and the day's series,
// and write one immutable state per date (state-store.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { TIMESTAMP, VARCHAR } from '@duckdb/node-api';
import { copyToParquet, fillSql, quotedString, sqlFile, toNumber, type DbSession } from './duckdb.ts';
import { loadCustomerReports } from './partition-load.ts';
import { newStateId, stateInput, stateVersion, TMP_PREFIX, writeState, type StateMeta } from './state-store.ts';
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
    // Hour and minute pieces of every date in one partitioned COPY each (one statement, not two
    // per date), into a scratch folder beside the states; each state then takes its files.
    const scratch = path.join(ctx.layout.state, `customer=${ctx.customerId}`, `${TMP_PREFIX}batch-${randomBytes(4).toString('hex')}`);
    await fs.mkdir(scratch, { recursive: true });
    try {
      const rowsOf = new Map<string, { hours: number; minutes: number }>();
      for (const grain of ['hours', 'minutes'] as const) {
        const counts = await s.all<{ date: string; n: bigint }>(
          `SELECT CAST(date AS VARCHAR) AS date, count(*) AS n FROM state_${grain} GROUP BY ALL`,
        );
        for (const c of counts) rowsOf.set(c.date, { hours: 0, minutes: 0, ...rowsOf.get(c.date), [grain]: toNumber(c.n) });
        await s.run(
          `COPY (SELECT * FROM state_${grain} ORDER BY date, start_us) TO ${quotedString(path.join(scratch, grain))}
           (FORMAT parquet, COMPRESSION zstd, PARTITION_BY (date), FILENAME_PATTERN 'part-{i}', WRITE_PARTITION_COLUMNS false)`,
        );
      }
      const metas: StateMeta[] = [];
      for (const date of dates) {
        const files = loaded.files.filter((f) => f.date === date);
        const all = landed.filter((f) => f.date === date);
        const k = keptOf.get(date);
        const rowsRead = readOf.get(date) ?? 0;
        const reports = k ? toNumber(k.n) : 0;
        const meta: StateMeta = {
          formatVersion: 1,
          stateId: newStateId(),
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
          pieceRows: (rowsOf.get(date)?.hours ?? 0) + (rowsOf.get(date)?.minutes ?? 0),
          seriesRows: 0,
          buildMs: 0,
        };
        await writeState(ctx.layout, meta, async (out) => {
          for (const grain of ['hours', 'minutes'] as const) {
            const written = path.join(scratch, grain, `date=${date}`, 'part-0.parquet');
            if (rowsOf.get(date)?.[grain]) await fs.rename(written, out[grain]);
            else await copyToParquet(s, `SELECT * EXCLUDE (date) FROM state_${grain} LIMIT 0`, out[grain]);
          }
          meta.seriesRows = await copyToParquet(
            s,
            `SELECT * FROM state_series WHERE CAST(bucketStart AS DATE) = CAST($date AS DATE) ORDER BY streamId, bucketSeconds, bucketStart`,
            out.series,
            { date },
            { date: VARCHAR },
            { rowGroupSize: SERIES_ROW_GROUP_SIZE },
          );
          meta.buildMs = Date.now() - started;
        });
        metas.push(meta);
      }
      return metas;
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
  } finally {
    await s.run(
      `DROP TABLE IF EXISTS raw_reports; DROP TABLE IF EXISTS reports; DROP TABLE IF EXISTS state_minutes;
       DROP TABLE IF EXISTS state_hours; DROP TABLE IF EXISTS state_series;`,
    );
  }
}
