// What a customer's settled session classes (the classes of its units that end by the start of the
// hour before asOf's, combine-plan.ts settledBeforeUs: its days before asOf's date and the layers
// of that date wholly before it; one or two files per customer: class-units.ts) give its stream
// summaries, kept in the state area beside those files (summary_base.sql), so that a tick's
// summaries add the other classes to it (window_summaries_incremental.sql) instead of grouping
// every session of the history again. A base is named by its settled files (each named by its
// units), the instant its late sessions begin (where the settled units end, less the horizon) and
// its band: it is made once for each settled file (once an hour at most: the settled classes
// change when an edge reaches another hour, or a merge replaces a settled layer) and reused by
// every tick until then.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { DOUBLE, LIST, TIMESTAMP, VARCHAR, listValue } from '@duckdb/node-api';
import { fileList, timestampParam } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { pieceSql, WINDOW_NAMES } from '../figures/index.ts';
import { classesFile, fileMadeOnce, settledBeforeUs, type CombinePlan } from '../states/index.ts';

/** Bumped when a base's columns or meaning change: a new version names new files. */
const VERSION = 'summary-base-1';

/**
 * The band of startup times a base keeps for each window and stream, beyond the 5 % the 95th
 * percentile needs from the top: a tick's sessions that are added or taken back move the
 * percentile by about one value each, and a stream whose changes leave the band is summed from
 * all of its classes instead (exact either way; the band only decides how often). At 2 % + 64
 * values, a stream of 1,350 sessions keeps ~160 values a window.
 */
export const SUMMARY_BAND = { extraFraction: 0.02, margin: 64 };

export interface SummaryBases {
  /** Each customer's base file, for those with settled classes. */
  files: Map<string, string>;
  /** How many of them this run made. */
  computed: number;
}

/**
 * The summary base of each customer's settled classes (`settled`: UnitClasses.settled), made the
 * first time a run needs it and touched on every use (retention keeps the files runs use).
 */
export async function summaryBases(
  s: DbSession,
  plan: Pick<CombinePlan, 'layout' | 'asOfUs' | 'asOfDate' | 'horizonSeconds'>,
  settled: ReadonlyMap<string, readonly string[]>,
  band: { extraFraction: number; margin: number } = SUMMARY_BAND,
): Promise<SummaryBases> {
  // A settled session can be active at an asOf of this hour only if its latest report is at most
  // the horizon older than where the settled units end (settledBeforeUs).
  const lateFrom = new Date(Number(settledBeforeUs(plan) / 1000n) - plan.horizonSeconds * 1000);
  const files = new Map<string, string>();
  let computed = 0;
  for (const [customer, classes] of settled) {
    if (classes.length === 0) continue;
    const key = createHash('sha256')
      .update([VERSION, ...classes.map((f) => path.basename(f)), lateFrom.toISOString(), band.extraFraction, band.margin].join('\n'))
      .digest('hex')
      .slice(0, 24);
    const file = classesFile(plan.layout, customer, `summary-${key}`);
    const query = pieceSql('summary_base', { settled: `read_parquet(${fileList(classes)}, hive_partitioning = false)` });
    const params = { window_names: listValue([...WINDOW_NAMES]), late_from: timestampParam(lateFrom), band_extra_fraction: band.extraFraction, band_margin: BigInt(band.margin) };
    if (await fileMadeOnce(s, file, query, {}, params, { window_names: LIST(VARCHAR), late_from: TIMESTAMP, band_extra_fraction: DOUBLE })) computed++;
    files.set(customer, file);
  }
  return { files, computed };
}
