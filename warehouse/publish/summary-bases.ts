// What a customer's settled session classes (the classes of its units that end by the start of the
// hour before asOf's, combine-plan.ts settledBeforeUs: its days before asOf's date and the layers
// of that date wholly before it; a few files per customer: class-units.ts) give its stream
// summaries, kept in the state area beside those files (summary_base.sql), so that a tick's
// summaries add the other classes to it (window_summaries_incremental.sql) instead of grouping
// every session of the history again. A base is named by the files it is made of (each named by
// its units), the instant its late sessions begin (where the settled units end, less the horizon)
// and its band. A customer's base of the units settled for the whole of asOf's date (its `day`
// files, one per block of days) is made once a day; its base of all settled units, composed from
// that one and the `hour` file's rows (summary_base_compose.sql), once an hour at most (the hour
// file changes when an edge reaches another hour, or a merge replaces a settled layer), and reused
// by every tick until then.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { DOUBLE, LIST, TIMESTAMP, VARCHAR, listValue } from '@duckdb/node-api';
import { fileList, timestampParam, type SqlParams, type SqlTypes } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { pieceSql, WINDOW_NAMES } from '../figures/index.ts';
import { classesFile, dayStartUs, fileMadeOnce, settledBeforeUs, type CombinePlan } from '../states/index.ts';
import type { SettledFiles } from './class-units.ts';

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
  /** How many bases this run made (a day base and the base composed from it count one each). */
  computed: number;
  /** Every base file the run used (the day bases too): retention keeps them. */
  used: string[];
}

type Band = { extraFraction: number; margin: number };

/**
 * The summary base of each customer's settled classes (`settled`: UnitClasses.settled), made the
 * first time a run needs it and touched on every use (retention keeps the files runs use). With
 * both groups of settled classes, the base is composed (summary_base_compose.sql) from the base of
 * the `day` files, which the first run of a day makes and every run of that day reuses, and the
 * `hour` file's rows: the first run of an hour then reads the rows that changed since midnight
 * and those of the sessions they touch, not every settled session. With one group, its base is
 * made from its rows (summary_base.sql).
 */
export async function summaryBases(
  s: DbSession,
  plan: Pick<CombinePlan, 'layout' | 'asOfUs' | 'asOfDate' | 'horizonSeconds'>,
  settled: ReadonlyMap<string, SettledFiles>,
  band: Band = SUMMARY_BAND,
): Promise<SummaryBases> {
  // A settled session can be active at an asOf of this hour only if its latest report is at most
  // the horizon older than where the settled units end (settledBeforeUs). A day base serves every
  // hour of asOf's date: its late sessions are those from the date's start (where the earliest
  // hour's settled units end), less the horizon.
  const lateFrom = new Date(Number(settledBeforeUs(plan) / 1000n) - plan.horizonSeconds * 1000);
  const dayLateFrom = new Date(Number(dayStartUs(plan.asOfDate) / 1000n) - plan.horizonSeconds * 1000);
  const files = new Map<string, string>();
  const used: string[] = [];
  let computed = 0;
  const made = async (customer: string, name: (string | number)[], query: string, params: SqlParams, types: SqlTypes): Promise<string> => {
    const key = createHash('sha256').update([VERSION, ...name].join('\n')).digest('hex').slice(0, 24);
    const file = classesFile(plan.layout, customer, `summary-${key}`);
    if (await fileMadeOnce(s, file, query, {}, params, types)) computed++;
    return file;
  };
  const read = (f: readonly string[]) => `read_parquet(${fileList(f)}, hive_partitioning = false)`;
  const baseOf = (customer: string, classes: readonly string[], from: Date) =>
    made(
      customer,
      [...classes.map((f) => path.basename(f)), from.toISOString(), band.extraFraction, band.margin],
      pieceSql('summary_base', { settled: read(classes) }),
      { window_names: listValue([...WINDOW_NAMES]), late_from: timestampParam(from), band_extra_fraction: band.extraFraction, band_margin: BigInt(band.margin) },
      { window_names: LIST(VARCHAR), late_from: TIMESTAMP, band_extra_fraction: DOUBLE },
    );
  for (const [customer, { day, hour }] of settled) {
    if (day.length > 0 && hour !== null) {
      const dayBase = await baseOf(customer, day, dayLateFrom);
      const file = await made(
        customer,
        ['composed', path.basename(dayBase), path.basename(hour), lateFrom.toISOString()],
        pieceSql('summary_base_compose', { fresh: read([hour]), settled: read(day), base: read([dayBase]) }),
        { window_names: listValue([...WINDOW_NAMES]), late_from: timestampParam(lateFrom) },
        { window_names: LIST(VARCHAR), late_from: TIMESTAMP },
      );
      files.set(customer, file);
      used.push(dayBase);
    } else if (day.length > 0) {
      // The day base alone serves every hour of the day: its late sessions from the day's start
      // include those from this hour's (the others are older than any asOf of the day less the
      // horizon: never active).
      files.set(customer, await baseOf(customer, day, dayLateFrom));
    } else if (hour !== null) files.set(customer, await baseOf(customer, [hour], lateFrom));
  }
  return { files, computed, used: [...used, ...files.values()] };
}
