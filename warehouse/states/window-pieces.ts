// The pieces of every window at asOf (window_pieces.sql), read where they lie: hour pieces wholly
// inside every window they touch, and the raw reports of the hours that a window edge cuts, each a
// piece of its own (docs/warehouse-state.md, "How a snapshot is made from states").
import { BIGINT, VARCHAR } from '@duckdb/node-api';
import { copyToParquet, STATE_COMPRESSION } from '../duckdb/index.ts';
import { fileList, fillSql, sqlFile } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { dateOfUs, DAY_US, dayStartUs, HOUR_US, settledBlockOf, unitSignature, windowEdges, type CombinePlan } from './combine-plan.ts';
import { noPiecesSql, pieceSql } from '../figures/index.ts';
import { loadStateReports } from './state-session-reports.ts';
import { hasSlots, SLOT_US, stateFiles, stateHourFiles, stateReportFiles, type LayerMeta, type StateMeta } from './state-store.ts';
import { dropRelations } from '../duckdb/index.ts';
import type { WarehouseLayout } from '../layout.ts';
import { exists } from '../../lib/fsx.ts';
import { testEdgeLoadBytes, testEdgeSlotsOff } from '../../lib/config.ts';

/** Literals of code-computed instants (never input), for filters DuckDB can push into Parquet reads. */
const lit = (xs: readonly bigint[]) => xs.map((x) => `${x}::BIGINT`).join(', ');

export interface WindowPieces {
  /** Hour-piece files read (retention keeps the compacted ones). */
  usedFiles: string[];
  /** Raw reports read to keep the pieces of newly cut hours. */
  edgeReportsRead: number;
  /** Ids of the layered states whose cut hours came from their layers' report files. */
  layeredStatesCut: string[];
  /**
   * The hour pieces, which the view leaves out, as the units whose session classes are kept in
   * the state area (class-units.ts): per customer, its days before asOf's date; then each hour
   * file of asOf's date (a layer of a layered state, or a state's own); then the slot pieces of
   * the hours an edge cuts in layered states, but for the edge's slot (`slots`).
   */
  units: ClassUnit[];
}

/**
 * Hour-piece files of one customer whose pieces lie in [fromUs, toUs) (microseconds; fromUs null:
 * unbounded); or, with `slots`, the slots files of the layers of a layered state whose hour
 * [fromUs, toUs) an edge cuts: the unit is their slot pieces of that hour but for the edge's slot
 * (slotPiecesSql), each wholly on one side of the edge while it stays in that slot.
 */
export interface ClassUnit {
  customerId: string;
  files: string[];
  fromUs: bigint | null;
  toUs: bigint;
  slots?: SlotCut;
}

/** Where a window's lower edge cuts an hour of a layered state: the hour, the edge's slot, the window. */
export interface SlotCut {
  hourUs: bigint;
  slotUs: bigint;
  windowSeconds: number;
}

/** The slot pieces of a slot unit's files (layer_slot_pieces.sql): its hour's, but the edge's slot. */
export function slotPiecesSql(files: readonly string[], cut: SlotCut): string {
  return pieceSql('layer_slot_pieces', { files: fileList(files), hour_us: `${cut.hourUs}::BIGINT`, cut_slot_us: `${cut.slotUs}::BIGINT` });
}


/**
 * The view `window_pieces` of the plan's states at asOf: the pieces of the hours an edge cuts;
 * the hour pieces, wholly inside every window they touch, are named in `units`.
 */
export async function createWindowPieces(s: DbSession, plan: CombinePlan): Promise<WindowPieces> {
  const units = classUnits(plan);
  const edges = await edgePieces(s, plan);
  const sources = [...(edges.sql ? [edges.sql] : []), noPiecesSql()];
  await s.run(fillSql(sqlFile('window_pieces'), { sources: sources.join('\nUNION ALL\n') }));
  return { usedFiles: units.flatMap((u) => u.files), edgeReportsRead: edges.reportsRead, layeredStatesCut: edges.layeredStatesCut, units: [...units, ...edges.slotUnits] };
}

/**
 * Hour pieces of `files` wholly inside every window they touch (hour_pieces.sql). Hours after
 * asOf's are left out by lo_us; asOf's own hour is whole unless cut.
 */
export function hourPiecesSql(plan: Pick<CombinePlan, 'asOfUs' | 'cutHours'>, files: readonly string[]): string {
  const notCut = plan.cutHours.length > 0 ? `NOT (NOT at_start AND start_us IN (${lit(plan.cutHours)}))` : 'true';
  return pieceSql('hour_pieces', { files: fileList(files), not_cut: notCut, as_of_us: lit([plan.asOfUs]) });
}

/**
 * The class units of the plan's states, so that a unit's session classes change as seldom as
 * they can (class-units.ts keeps them per unit and signature; a unit is made again when its
 * signature changes, once an hour at most). Each hour file of asOf's date is a unit of its own
 * (a layered state adds a layer at each run, and only the new layer's classes are new), over
 * the hours its reports lie in: a layer whose hours all lie before the 1h window's edge keeps its
 * classes when the edge moves on. A customer's days before asOf's date are grouped by their
 * signature: the days that an edge or asOf falls in are units of their own, and each run of days
 * between two of them one unit over its states' hour files, whose classes then stay the same
 * until the edges move to another day (once a day); before that, the customer's 30 days were one
 * unit, made again at every hour. (Until 2026-11-30 the days of a run older than the day before
 * yesterday were read from one compacted file of their hour pieces, made again whenever the run's
 * days changed, once a day: class-units.ts now makes the classes of all of a customer's runs of
 * days at once, from their states' own files, and the copy saved nothing.)
 */
function classUnits(plan: CombinePlan): ClassUnit[] {
  const units: ClassUnit[] = [];
  const before = new Map<string, StateMeta[]>();
  for (const m of plan.states) {
    if (m.date === plan.asOfDate) units.push(...todayUnits(plan, m));
    else before.set(m.customerId, [...(before.get(m.customerId) ?? []), m]);
  }
  for (const [customerId, states] of before) {
    for (const group of daysBySignature(plan, states)) {
      const files = group.flatMap((m) => stateHourFiles(plan.layout, m));
      const first = dayStartUs(group[0]!.date);
      const last = dayStartUs(group[group.length - 1]!.date) + DAY_US;
      units.push({ customerId, files, fromUs: first, toUs: last });
    }
  }
  return units;
}

/**
 * A customer's states of days before asOf's date, in runs of consecutive days of one signature
 * (combine-plan.ts unitSignature over each day): an edge lies in one day only, so a day that holds
 * one is a run of its own, and the days between two edges share theirs.
 */
function daysBySignature(plan: CombinePlan, states: readonly StateMeta[]): StateMeta[][] {
  const groups: { signature: string; states: StateMeta[] }[] = [];
  for (const m of [...states].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))) {
    const from = dayStartUs(m.date);
    // A run of days ends at a block's bound too (settledBlockOf): class-units.ts makes a file of
    // each block's settled runs of days.
    const signature = `${settledBlockOf(from)} ${unitSignature(plan, from, from + DAY_US)}`;
    const last = groups[groups.length - 1];
    if (last && last.signature === signature) last.states.push(m);
    else groups.push({ signature, states: [m] });
  }
  return groups.map((g) => g.states);
}

/**
 * The units of a state of asOf's date: each layer's hour file over the hours from its earliest
 * report's to its latest's (a layer made before layers recorded their earliest report: from the
 * day's start); a state built whole, its hour file over the day.
 */
function todayUnits(plan: CombinePlan, m: StateMeta): ClassUnit[] {
  const dayUs = dayStartUs(m.date);
  if (!m.layers) return [{ customerId: m.customerId, files: [stateFiles(plan.layout, m).hours], fromUs: dayUs, toUs: dayUs + DAY_US }];
  return m.layers.map((l) => layerClassUnit(plan.layout, m, l));
}

/** The class unit of one layer of a state of asOf's date (todayUnits). */
export function layerClassUnit(layout: WarehouseLayout, m: StateMeta, l: LayerMeta): ClassUnit {
  const dayUs = dayStartUs(m.date);
  // The hour of a ts of the layer's day; null for one that is not (then the day's edge serves:
  // a span too wide only makes the classes change more often, one too narrow would be wrong).
  const hourOf = (ts: string | null | undefined): bigint | null => {
    const ms = ts ? Date.parse(ts) : NaN;
    if (!Number.isFinite(ms)) return null;
    const us = BigInt(ms) * 1000n;
    return us >= dayUs && us < dayUs + DAY_US ? us - (us % HOUR_US) : null;
  };
  const first = hourOf(l.minTs);
  const last = hourOf(l.maxTs);
  return {
    customerId: m.customerId,
    files: [stateFiles(layout, m).layer(l.layerId).hours],
    fromUs: first ?? dayUs,
    toUs: last === null ? dayUs + DAY_US : last + HOUR_US,
  };
}

/** An hour that an edge cuts, in a state of its day, and the file beside the state that keeps its pieces. */
interface EdgeHour {
  m: StateMeta;
  h: bigint;
  file: string;
}

/**
 * The hours an edge cuts (the hour's first instant is in its hour piece), each state's reports of
 * them as pieces of their own, classed by their ts (edge_pieces.sql). A state's reports of an hour
 * never change, so they are kept beside the state the first time an edge cuts that hour (an edge
 * stays in an hour for an hour of 5-minute runs), and read from there.
 */
async function edgePieces(s: DbSession, plan: CombinePlan): Promise<{ sql: string | null; reportsRead: number; layeredStatesCut: string[]; slotUnits: ClassUnit[] }> {
  const layered = layeredEdgePieces(plan);
  const whole = await wholeStateEdgePieces(s, { ...plan, states: plan.states.filter((m) => !m.layers) });
  const sources = [layered?.sql ?? null, whole.sql].filter((x): x is string => x !== null);
  return {
    sql: sources.length > 0 ? sources.join('\nUNION ALL\n') : null,
    reportsRead: whole.reportsRead,
    layeredStatesCut: layered?.states ?? [],
    slotUnits: layered?.slotUnits ?? [],
  };
}

/** A TIMESTAMP literal of an instant in microseconds since the epoch (code-computed, never input). */
export function timestampLiteral(us: bigint): string {
  const ms = us / 1000n;
  const micros = String(us % 1000n).padStart(3, '0');
  return `TIMESTAMP '${new Date(Number(ms)).toISOString().replace('T', ' ').replace('Z', '')}${micros}'`;
}

/**
 * The cut hours of layered states, each report a piece of its own (layer_edge_pieces.sql) from
 * their layers' report files (sorted by ts: only the row groups of those hours are read). An hour
 * that a lower edge cuts wholly before asOf is read so only over the 5-minute slot the edge falls
 * in, from the layers that have slot pieces; the hour's other slots lie wholly on one side of the
 * edge, and their slot pieces are a class unit of each customer (`slotUnits`, class-units.ts),
 * whose classes stay the same while the edge stays in its slot and the layers do not change. An
 * hour that a state of asOf's day holds reports after asOf in, and layers made before slot pieces,
 * are read report by report over the hour.
 */
function layeredEdgePieces(plan: CombinePlan): { sql: string | null; states: string[]; slotUnits: ClassUnit[] } | null {
  const cut = plan.states.filter((m) => m.layers && m.layers.length > 0 && plan.cutHours.some((h) => dateOfUs(h) === m.date));
  const edges = windowEdges(plan.asOf).lowerEdges;
  const slotUnits: ClassUnit[] = [];
  // One statement per cut hour (or slot) over the files of its day's states: a range on ts alone,
  // which DuckDB serves from the row groups' statistics (an OR of the hours made it read every
  // row group's ts, ~0.1 s more on a day of 2.8 M reports).
  const queries = plan.cutHours.flatMap((h) => {
    const states = cut.filter((m) => m.date === dateOfUs(h));
    const hourEnd = h + HOUR_US - 1n < plan.asOfUs ? h + HOUR_US - 1n : plan.asOfUs;
    const reportsOver = (files: readonly string[], after: bigint, upTo: bigint) =>
      files.length === 0 ? [] : [pieceSql('layer_edge_pieces', { files: fileList(files), after: timestampLiteral(after), up_to: timestampLiteral(upTo) })];
    const edge = edges.find((e) => e.edge > h && e.edge < h + HOUR_US);
    if (edge === undefined || h + HOUR_US - 1n >= plan.asOfUs || testEdgeSlotsOff()) return reportsOver(states.flatMap((m) => stateReportFiles(plan.layout, m)), h, hourEnd);
    const slotUs = h + ((edge.edge - h) / SLOT_US) * SLOT_US;
    const unslotted: string[] = [];
    const slotted: string[] = [];
    for (const m of states) {
      // The layers that hold reports of the hour: later ones (every run adds one) leave the unit as it is.
      const files = (m.layers ?? []).filter((l) => layerMayHold(l, h)).map((l) => ({ l, f: stateFiles(plan.layout, m).layer(l.layerId) }));
      unslotted.push(...files.filter(({ l }) => !hasSlots(l)).map(({ f }) => f.reports));
      const withSlots = files.filter(({ l }) => hasSlots(l));
      slotted.push(...withSlots.map(({ f }) => f.reports));
      if (withSlots.length > 0) {
        const cutAt: SlotCut = { hourUs: h, slotUs, windowSeconds: edge.windowSeconds };
        slotUnits.push({ customerId: m.customerId, files: withSlots.map(({ f }) => f.slots), fromUs: h, toUs: h + HOUR_US, slots: cutAt });
      }
    }
    // The edge's slot report by report (its first instant is the hour's, which the hour pieces hold).
    return [...reportsOver(unslotted, h, hourEnd), ...reportsOver(slotted, slotUs === h ? h : slotUs - 1n, slotUs + SLOT_US - 1n)];
  });
  if (queries.length === 0 && slotUnits.length === 0) return null;
  return { sql: queries.length > 0 ? queries.map((q) => `(${q})`).join('\nUNION ALL\n') : null, states: cut.map((m) => m.stateId), slotUnits };
}

/** Whether a layer may hold reports of the hour from `h` (its recorded span; a layer made before minTs was recorded may). */
function layerMayHold(l: LayerMeta, h: bigint): boolean {
  if (l.maxTs === null) return false;
  const us = (ts: string) => BigInt(Date.parse(ts)) * 1000n;
  // The recorded instants have microseconds, Date.parse keeps milliseconds: the latest may be up to 999 µs later.
  return us(l.maxTs) + 999n > h && (l.minTs == null || us(l.minTs) < h + HOUR_US);
}

/** The cut hours of states built whole, from the edge-hour files kept beside them. */
async function wholeStateEdgePieces(s: DbSession, plan: CombinePlan): Promise<{ sql: string | null; reportsRead: number }> {
  const cut: EdgeHour[] = plan.states.flatMap((m) =>
    plan.cutHours.filter((h) => dateOfUs(h) === m.date).map((h) => ({ m, h, file: stateFiles(plan.layout, m).edgeHour(h) })),
  );
  const missing: EdgeHour[] = [];
  for (const e of cut) if (!(await exists(e.file))) missing.push(e);
  const reportsRead = missing.length > 0 ? await writeEdgeHours(s, plan.layout, missing) : 0;
  if (cut.length === 0) return { sql: null, reportsRead };
  return { sql: pieceSql('edge_pieces', { files: fileList(cut.map((e) => e.file)), as_of_us: lit([plan.asOfUs]) }), reportsRead };
}

/**
 * Bytes of raw files that one load of edge hours reads at most (a state of more alone): a load
 * holds its files' row groups as it scans them, so the memory of the first run of an hour (the
 * edges enter an hour of ~30 old partitions) grows with the batch, not with the days' sizes
 * (docs/warehouse-state.md, "How the warehouse grows"). A day of one customer of the 30-day
 * benchmark set is 4–5 MB at 1,350 sessions a stream.
 */
export const EDGE_LOAD_BYTES = 16 * 1024 * 1024;

/**
 * The missing edge hours in batches of whole states (a partition's copies of a report are all in
 * its own files, so a batch deduplicates them as the whole would) of at most `maxBytes` of raw
 * files each, in the order given.
 */
export function edgeHourBatches<E extends { m: Pick<StateMeta, 'stateId' | 'files'> }>(missing: readonly E[], maxBytes: number): E[][] {
  const byState = new Map<string, E[]>();
  for (const e of missing) byState.set(e.m.stateId, [...(byState.get(e.m.stateId) ?? []), e]);
  const batches: E[][] = [];
  let current: E[] = [];
  let bytes = 0;
  for (const edges of byState.values()) {
    const size = edges[0]!.m.files.reduce((a, f) => a + f.size, 0);
    if (current.length > 0 && bytes + size > maxBytes) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(...edges);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * The edge-hour files of `missing`, from the raw reports of their states' files, deduplicated by
 * the one rule (all copies of a report share its ts, hence its partition), a batch of states at a
 * time (edgeHourBatches); returns the rows read.
 */
async function writeEdgeHours(s: DbSession, layout: WarehouseLayout, missing: readonly EdgeHour[]): Promise<number> {
  let read = 0;
  for (const batch of edgeHourBatches(missing, testEdgeLoadBytes() ?? EDGE_LOAD_BYTES)) read += await writeEdgeHourBatch(s, layout, batch);
  return read;
}

async function writeEdgeHourBatch(s: DbSession, layout: WarehouseLayout, missing: readonly EdgeHour[]): Promise<number> {
  const hours = [...new Set(missing.map((e) => e.h))];
  const inHours = hours.map((h) => `(ts > make_timestamp(${h}::BIGINT) AND ts < make_timestamp(${h + HOUR_US}::BIGINT))`).join(' OR ');
  const read = await loadStateReports(s, layout, [...new Set(missing.map((e) => e.m))], inHours);
  await s.run(pieceSql('edge_reports', { source: 'reports' }));
  for (const e of missing) {
    await copyToParquet(
      s,
      pieceSql('edge_hour_pieces'),
      e.file,
      { customer: e.m.customerId, hour_start: e.h, hour_end: e.h + HOUR_US },
      { customer: VARCHAR, hour_start: BIGINT, hour_end: BIGINT },
      { compression: STATE_COMPRESSION },
    );
  }
  await dropRelations(s, ['edge_reports']);
  return read;
}
