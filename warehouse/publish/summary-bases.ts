// What a customer's settled session classes (the classes of its units that end by the start of the
// hour before asOf's, combine-plan.ts settledBeforeUs: its days before asOf's date and the layers of
// that date wholly before it; one file per customer: class-units.ts) give its stream summaries, kept in the state area beside that file
// (summary_base.sql), so that a tick's summaries add the other classes to it
// (window_summaries_incremental.sql) instead of grouping every session of the history again.
// A base is named by its settled file (which is named by its units), the start of the date its
// late sessions are counted for and its band: it is made once for each settled file (once an
// hour at most: the settled classes change when an edge reaches another hour) and reused by every
// tick until then.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { DOUBLE, LIST, TIMESTAMP, VARCHAR, listValue } from '@duckdb/node-api';
import fs from 'node:fs/promises';
import { fileList, timestampParam, type SqlParams, type SqlTypes } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { pieceSql, WINDOW_NAMES } from '../figures/index.ts';
import { classesFile, fileMadeOnce, settledBeforeUs, type CombinePlan } from '../states/index.ts';
import { exists } from '../../lib/fsx.ts';

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
  settled: ReadonlyMap<string, string>,
  band: { extraFraction: number; margin: number } = SUMMARY_BAND,
): Promise<SummaryBases> {
  const lateFrom = baseLateFrom(plan);
  const files = new Map<string, string>();
  let computed = 0;
  for (const [customer, classes] of settled) {
    const file = classesFile(plan.layout, customer, `summary-${hashKey([VERSION, path.basename(classes), lateFrom.toISOString(), band.extraFraction, band.margin])}`);
    if (await fileMadeOnce(s, file, wholeBaseSql([classes]), {}, ...wholeBaseParams(lateFrom, band))) computed++;
    files.set(customer, file);
  }
  return { files, computed };
}

/**
 * Where a base's late sessions begin: a settled session can be active at an asOf of this hour
 * only if its latest report is at most the horizon older than where the settled units end
 * (settledBeforeUs); a steady layer's session that ends before then cannot be either.
 */
function baseLateFrom(plan: Pick<CombinePlan, 'asOfUs' | 'asOfDate' | 'horizonSeconds'>): Date {
  return new Date(Number(settledBeforeUs(plan) / 1000n) - plan.horizonSeconds * 1000);
}

const hashKey = (parts: (string | number)[]) => createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 24);
const rowsOf = (files: readonly string[]) => `read_parquet(${fileList(files)}, hive_partitioning = false)`;

/** summary_base.sql over all of the given class files. */
function wholeBaseSql(classes: readonly string[]): string {
  return pieceSql('summary_base', { settled: rowsOf(classes) });
}

function wholeBaseParams(lateFrom: Date, band: { extraFraction: number; margin: number }): [SqlParams, SqlTypes] {
  return [
    { window_names: listValue([...WINDOW_NAMES]), late_from: timestampParam(lateFrom), band_extra_fraction: band.extraFraction, band_margin: BigInt(band.margin) },
    { window_names: LIST(VARCHAR), late_from: TIMESTAMP, band_extra_fraction: DOUBLE },
  ];
}

/** Bumped when a chained base's meaning changes: a new version names new files. */
const CHAIN_VERSION = 'summary-chain-1';

/** A customer's base for a run's summaries, and the class files it was made of (window_summaries_incremental.sql's <settled>). */
export interface RunBase {
  base: string;
  settled: string[];
}

/**
 * Each customer's base of its settled classes and of its steady layers that are not settled
 * (class-units.ts UnitClasses.steady: layers of asOf's date that no build merges any more), so
 * that a run's summaries group the sessions of the other classes only (the inline-merge tail,
 * the cut hours), not those of all of today's layers. Named by the settled classes' base and the
 * steady layers' class files, oldest first; made from the base of the longest run of those layers
 * (from the first) that has one, usually the last run's: a run adds the layer that left the
 * inline tail (summary_base_step.sql adds that layer's sessions), a background merge replaces the
 * newest of them (the step adds the merged layer); from the settled classes' base when none has
 * one (at the first run of an hour: the settled classes' base is new). A step that does not check
 * out (its `valid`) makes the base from all of its classes instead. Returns each customer's base
 * (the settled classes' own when it has no steady layer), how many bases the run made and how
 * many of them by a step.
 */
export async function chainedBases(
  s: DbSession,
  plan: Pick<CombinePlan, 'layout' | 'asOfUs' | 'asOfDate' | 'horizonSeconds'>,
  bases: ReadonlyMap<string, string>,
  settled: ReadonlyMap<string, string>,
  steady: ReadonlyMap<string, readonly string[]>,
  band: { extraFraction: number; margin: number } = SUMMARY_BAND,
): Promise<{ bases: Map<string, RunBase>; computed: number; stepped: number }> {
  const lateFrom = baseLateFrom(plan);
  const out = new Map<string, RunBase>();
  let computed = 0;
  let stepped = 0;
  for (const [customer, first] of bases) {
    const classes = settled.get(customer)!;
    const layers = steady.get(customer) ?? [];
    if (layers.length === 0) {
      out.set(customer, { base: first, settled: [classes] });
      continue;
    }
    const fileOf = (n: number) => classesFile(plan.layout, customer, `summary-${hashKey([CHAIN_VERSION, path.basename(first), ...layers.slice(0, n).map((f) => path.basename(f))])}`);
    const file = fileOf(layers.length);
    out.set(customer, { base: file, settled: [classes, ...layers] });
    if (await exists(file)) {
      const now = new Date();
      await fs.utimes(file, now, now).catch(() => {});
      continue;
    }
    let from = 0;
    for (let n = layers.length - 1; n >= 1 && from === 0; n--) if (await exists(fileOf(n))) from = n;
    // Touched, so that retention keeps it while it is read.
    if (from > 0) await fs.utimes(fileOf(from), new Date(), new Date()).catch(() => {});
    const step = pieceSql('summary_base_step', {
      fresh: rowsOf(layers.slice(from)),
      settled: rowsOf([classes, ...layers.slice(0, from)]),
      base: rowsOf([from === 0 ? first : fileOf(from)]),
    });
    const [params, types] = wholeBaseParams(lateFrom, band);
    await s.run(`CREATE OR REPLACE TEMP TABLE summary_base_step AS ${step}`, { window_names: params['window_names']!, late_from: params['late_from']! }, types);
    const { ok } = await s.one<{ ok: boolean | null }>('SELECT bool_and(valid) AS ok FROM summary_base_step');
    if (ok !== false) {
      await fileMadeOnce(s, file, 'SELECT * EXCLUDE (valid) FROM summary_base_step ORDER BY streamId, kind', {});
      stepped++;
    } else await fileMadeOnce(s, file, wholeBaseSql([classes, ...layers]), {}, params, types);
    computed++;
    await s.run('DROP TABLE IF EXISTS summary_base_step');
  }
  return { bases: out, computed, stepped };
}
