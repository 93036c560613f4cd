// The per-day series files of a snapshot. A day's series is its state's own file, hard-linked into
// the snapshot, when every report of the state is at or before asOf (every complete day, and the
// day of asOf in the usual case), past days through blocks of many days (series-blocks.ts); a day
// whose state holds reports after asOf is computed from its raw reports up to asOf.
import fs from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { copyToParquet } from '../duckdb/index.ts';
import { createEmptyTable } from '../session-reports/index.ts';
import { fileList, sqlFile } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { planSeriesBlocks, seriesBlock } from './series-blocks.ts';
import { SERIES_ROW_GROUP_SIZE } from '../states/index.ts';
import { noPiecesSql, pieceSql } from '../figures/index.ts';
import { loadStateReports } from '../states/index.ts';
import { stateFiles, type StateMeta } from '../states/index.ts';
import { timestampLiteral } from '../states/index.ts';
import { STANDARD_BUCKET_SECONDS } from '../figures/index.ts';
import type { CombinePlan, CustomerFigures } from '../states/index.ts';
import { fsyncDir, linkOrCopy } from '../../lib/fsx.ts';

/** A file of the state area and where the snapshot has it. */
interface Placed {
  from: string;
  to: string;
}

/** Writes the snapshot's series files, counting them in `figures`; returns the compacted files used and the raw reports read. */
export async function writeSeriesDays(
  s: DbSession,
  plan: CombinePlan,
  figures: Map<string, CustomerFigures>,
): Promise<{ usedFiles: string[]; edgeReportsRead: number; layeredStatesCut: string[] }> {
  const { placed, usedFiles } = await wholeDays(s, plan);
  await linkAll(placed);
  countLinkedDays(plan, figures);
  const edgeReportsRead = await computePartialDays(s, plan);
  await writeComputedDays(s, plan, figures);
  await fsyncDirs(placed);
  return { usedFiles, edgeReportsRead, layeredStatesCut: plan.after.filter((m) => m.layers && m.layers.length > 0).map((m) => m.stateId) };
}

/**
 * Where the snapshot has the series of the whole states' days: past days through blocks of many
 * days (a read of a long window opens a few files, not one per day), the others their state's own file.
 */
async function wholeDays(s: DbSession, plan: CombinePlan): Promise<{ placed: Placed[]; usedFiles: string[] }> {
  const { blocks, singles } = planSeriesBlocks(plan.whole, plan.asOfDate);
  const placed = singles.map((m) => ({ from: stateFiles(plan.layout, m).series, to: plan.build.seriesDay(m.customerId, m.date) }));
  const usedFiles: string[] = [];
  for (const b of blocks) {
    const file = await seriesBlock(s, plan.layout, b);
    usedFiles.push(file);
    placed.push({ from: file, to: plan.build.seriesDays(b.customerId, b.first, b.last) });
  }
  return { placed, usedFiles };
}

/** Links and folders in parallel: each is a small metadata operation. */
async function linkAll(placed: readonly Placed[]): Promise<void> {
  const limit = pLimit(16);
  await Promise.all(
    placed.map(({ from, to }) =>
      limit(async () => {
        await fs.mkdir(path.dirname(to), { recursive: true });
        await linkOrCopy(from, to);
      }),
    ),
  );
}

/** Fsyncs of one file system's folders overlap into few journal commits. */
async function fsyncDirs(placed: readonly Placed[]): Promise<void> {
  const limit = pLimit(16);
  await Promise.all([...new Set(placed.map((p) => path.dirname(p.to)))].map((d) => limit(() => fsyncDir(d))));
}

function countLinkedDays(plan: CombinePlan, figures: Map<string, CustomerFigures>): void {
  for (const m of plan.whole) {
    const f = figures.get(m.customerId);
    if (f) {
      f.seriesRows += m.seriesRows;
      f.seriesDaysLinked++;
    }
  }
}

/**
 * `partial_series`: every standard size of the series of asOf's date for the states that hold
 * reports after asOf, from their raw reports up to asOf (empty when there are none); returns the
 * raw reports read.
 */
async function computePartialDays(s: DbSession, plan: CombinePlan): Promise<number> {
  let read = 0;
  await createEmptyTable(s, 'partial_pieces', noPiecesSql());
  const whole = plan.after.filter((m) => !m.layers);
  const layered = plan.after.filter((m) => m.layers && m.layers.length > 0);
  if (whole.length > 0) {
    read = await loadStateReports(s, plan.layout, whole, `ts <= make_timestamp(${plan.asOfUs}::BIGINT)`);
    await s.run(pieceSql('partial_pieces', { source: 'reports' }));
  }
  if (layered.length > 0) await s.run(layeredPartialSql(plan, layered));
  await createEmptyTable(s, 'partial_series', pieceSql('series_combine', { pieces: 'partial_pieces' }), { bucket_seconds: 60 });
  if (plan.after.length > 0) {
    for (const size of STANDARD_BUCKET_SECONDS) await s.run(pieceSql('partial_series', { pieces: 'partial_pieces' }), { bucket_seconds: size });
  }
  return read;
}

/**
 * layer_partial_pieces.sql for layered states that hold reports after asOf: their minute pieces of
 * the minutes wholly at or before asOf, and their reports of the minute asOf cuts, up to asOf.
 */
function layeredPartialSql(plan: CombinePlan, states: readonly StateMeta[]): string {
  const minute = 60_000_000n;
  const start = plan.asOfUs - (plan.asOfUs % minute);
  const wholeBefore = start + minute - 1n <= plan.asOfUs ? start + minute : start;
  const layerFiles = states.flatMap((m) => (m.layers ?? []).map((l) => stateFiles(plan.layout, m).layer(l.layerId)));
  return pieceSql('layer_partial_pieces', {
    minutes: fileList(layerFiles.map((f) => f.minutes)),
    reports: fileList(layerFiles.map((f) => f.reports)),
    whole_before_us: `${wholeBefore}::BIGINT`,
    whole_before: timestampLiteral(wholeBefore),
    as_of: timestampLiteral(plan.asOfUs),
  });
}

/**
 * The series file of asOf's date of each customer on a partial day, and of each customer with no
 * linked day (an empty one when it has no bucket yet), so that readers' globs always match.
 */
async function writeComputedDays(s: DbSession, plan: CombinePlan, figures: Map<string, CustomerFigures>): Promise<void> {
  const linked = new Set(plan.whole.map((m) => m.customerId));
  for (const c of plan.customers) {
    const onPartialDay = plan.after.some((m) => m.customerId === c);
    if (!onPartialDay && linked.has(c)) continue;
    const rows = await copyToParquet(s, sqlFile('partial_series_of_customer'), plan.build.seriesDay(c, plan.asOfDate), { customer: c }, undefined, {
      rowGroupSize: SERIES_ROW_GROUP_SIZE,
    });
    const f = figures.get(c)!;
    f.seriesRows += rows;
    f.seriesDaysWritten++;
  }
}
