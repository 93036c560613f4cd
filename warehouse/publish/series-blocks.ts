// Series blocks (docs/warehouse-state.md, "Series blocks"): a customer's past days whose series a
// snapshot publishes as one file, so that a read of a long window opens a few files, not one per day.
import { fileList, fillSql, sqlFile } from '../duckdb/index.ts';
import { STATE_COMPRESSION } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { compactedFile, statesKey } from '../states/index.ts';
import { dateOfDay, epochDay } from '../states/index.ts';
import { SERIES_ROW_GROUP_SIZE } from '../states/index.ts';
import { seriesBlockFile, stateFiles, type StateMeta } from '../states/index.ts';
import type { WarehouseLayout } from '../layout.ts';

/**
 * Spans of past days whose series are read as one file, largest first: 64 days, then 8, aligned on
 * days since the epoch so that a span is the same from run to run. A 30-day window then opens a
 * few files instead of 30 (measured in docs/warehouse-state.md, "Series blocks").
 */
export const SERIES_BLOCK_DAYS = [64, 8] as const;
/** Bumped when the layout of a block file changes: its name changes with it. */
const SERIES_BLOCK_VERSION = 2;

export interface SeriesBlock {
  customerId: string;
  first: string;
  last: string;
  /** The states of the block's days that have reports (at least two), by date. */
  states: StateMeta[];
}

/**
 * Which days of `whole` (states with no report after asOf) are read through blocks: a span is a
 * block when it ends before asOf's date (no day of it can still change but by a late file, which
 * changes its states and so the block's name) and at least two of its days have a state. The
 * complete days of the span that holds asOf's date (two or more with a state, before asOf's day)
 * are one more block, from the first to the last of them: rebuilt once a day, when another day completes (at
 * most SERIES_BLOCK_DAYS' smallest span of one customer's series), so that a 7-day or 30-day read
 * opens a few files rather than up to seven days on their own. The rest (asOf's own day, a lone
 * day) are read day by day.
 */
export function planSeriesBlocks(whole: readonly StateMeta[], asOfDate: string): { blocks: SeriesBlock[]; singles: StateMeta[] } {
  const asOfDay = epochDay(asOfDate);
  let rest = [...whole];
  const blocks: SeriesBlock[] = [];
  for (const span of SERIES_BLOCK_DAYS) {
    const groups = new Map<string, { start: number; list: StateMeta[] }>();
    const keep: StateMeta[] = [];
    for (const m of rest) {
      const start = Math.floor(epochDay(m.date) / span) * span;
      if (start + span - 1 >= asOfDay) {
        keep.push(m);
        continue;
      }
      const key = `${m.customerId}|${start}`;
      const group = groups.get(key);
      if (group) group.list.push(m);
      else groups.set(key, { start, list: [m] });
    }
    for (const { start, list } of groups.values()) {
      if (list.length < 2) {
        keep.push(...list);
        continue;
      }
      blocks.push({ customerId: list[0]!.customerId, first: dateOfDay(start), last: dateOfDay(start + span - 1), states: list.sort((a, b) => (a.date < b.date ? -1 : 1)) });
    }
    rest = keep;
  }
  // The complete days of the span that holds asOf's date.
  const span = Math.min(...SERIES_BLOCK_DAYS);
  const current = Math.floor(asOfDay / span) * span;
  const partial = new Map<string, StateMeta[]>();
  const singles: StateMeta[] = [];
  for (const m of rest) {
    const day = epochDay(m.date);
    if (day >= current && day < asOfDay) partial.set(m.customerId, [...(partial.get(m.customerId) ?? []), m]);
    else singles.push(m);
  }
  for (const list of partial.values()) {
    if (list.length < 2) {
      singles.push(...list);
      continue;
    }
    list.sort((a, b) => (a.date < b.date ? -1 : 1));
    blocks.push({ customerId: list[0]!.customerId, first: list[0]!.date, last: list.at(-1)!.date, states: list });
  }
  return { blocks, singles };
}

/**
 * The block's file in the state area (compacted-files.ts): the series of its days, sorted by
 * stream, size and time like a day's (series_block.sql).
 */
export function seriesBlock(s: DbSession, layout: WarehouseLayout, b: SeriesBlock): Promise<string> {
  const file = seriesBlockFile(layout, b.customerId, b.first, b.last, statesKey(b.states, [`v${SERIES_BLOCK_VERSION}`]));
  const query = fillSql(sqlFile('series_block'), { files: fileList(b.states.map((m) => stateFiles(layout, m).series)) });
  return compactedFile(s, file, query, { compression: STATE_COMPRESSION, rowGroupSize: SERIES_ROW_GROUP_SIZE });
}
