// What the steps of combining partition states into a snapshot share (state-combine.ts): the
// instants they work in (microseconds since the epoch, UTC days), the hours that the windows'
// edges cut at asOf, and which states serve the snapshot whole.
import { WINDOWS } from '../figures/index.ts';
import type { SnapshotFiles } from '../snapshots/index.ts';
import type { StateMeta } from './state-store.ts';
import type { WarehouseLayout } from '../layout.ts';

export const HOUR_US = 3_600_000_000n;

export function usOf(d: Date): bigint {
  return BigInt(d.getTime()) * 1000n;
}

export function dateOfUs(us: bigint): string {
  return new Date(Number(us / 1000n)).toISOString().slice(0, 10);
}

/** UTC dates as days since the epoch, and back. */
const DAY_MS = 86_400_000;
export const epochDay = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
export const dateOfDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

export const DAY_US = 86_400_000_000n;

/** The start of the `grain`-long interval (since the epoch) that holds `us`, negative instants too. */
const floorUs = (us: bigint, grain: bigint): bigint => us - (((us % grain) + grain) % grain);

/** The first instant of a UTC date, in microseconds since the epoch. */
export const dayStartUs = (date: string) => BigInt(epochDay(date)) * DAY_US;

/**
 * The days a customer's settled classes that stay for the rest of asOf's date are grouped by
 * (class-units.ts: a file of each block, made from the runs of days in it, which
 * window-pieces.ts cuts at a block's bounds): blocks of this many UTC days from the epoch, so
 * that a block holds the same days from one date to the next. A new day of history, an edge
 * reaching another day, or a partition rebuilt after a deployment then makes the files of the
 * blocks it touches again, not a file of all of the history (docs/warehouse-state.md).
 */
export const SETTLED_BLOCK_DAYS = 4;
const SETTLED_BLOCK_US = DAY_US * BigInt(SETTLED_BLOCK_DAYS);

/** The block of SETTLED_BLOCK_DAYS days that holds the UTC day starting at `dayStart` (µs). */
export const settledBlockOf = (dayStart: bigint): bigint => floorUs(dayStart, SETTLED_BLOCK_US) / SETTLED_BLOCK_US;

/**
 * Where a snapshot's settled class units end (class-units.ts: each customer's units before it read
 * through one file, whose summary base summary-bases.ts keeps): the start of the hour before
 * asOf's, or of asOf's date when that is later. Every unit that ends by then lies wholly before the
 * 1h window's lower edge (which is in that hour or later) and after the others' (a day back or
 * more, in a unit of its own), so its classes stay the same for the rest of asOf's hour; and its
 * sessions' latest reports are older than asOf by at least the time since this instant, which
 * bounds those that can still be active. Until 2026-11-29 it was the start of asOf's date, and a
 * tick's summaries grouped every session of the day so far (docs/benchmarks.md).
 */
export function settledBeforeUs(plan: Pick<CombinePlan, 'asOfUs' | 'asOfDate'>): bigint {
  const hourBefore = floorUs(plan.asOfUs, HOUR_US) - HOUR_US;
  const day = dayStartUs(plan.asOfDate);
  return hourBefore > day ? hourBefore : day;
}

/** Each bounded window's lower edge at asOf (asOf less its length), narrowest first. */
function lowerEdgesUs(asOfUs: bigint): { windowSeconds: number; edge: bigint }[] {
  return WINDOWS.flatMap((w) => (w.seconds === null ? [] : [{ windowSeconds: w.seconds, edge: asOfUs - BigInt(w.seconds) * 1_000_000n }]));
}

/**
 * Whether a settled unit's classes stay the same for the rest of asOf's date (class-units.ts
 * keeps those units in a file of their own, made once a day): it lies before asOf's date and holds
 * no window's lower edge, no asOf and no cut hour. Each lower edge is asOf less whole days (or
 * less an hour, in the day before only at the first hour of asOf's date, where the 24h edge is
 * anyway), so it stays in one date for all of asOf's date: a unit without one now has none until
 * midnight. The others (the days the edges fall in, the layers of asOf's date) change hourly.
 */
export function unitSettledForTheDay(plan: Pick<CombinePlan, 'asOfUs' | 'asOfDate' | 'cutHours'>, fromUs: bigint | null, toUs: bigint): boolean {
  if (toUs > dayStartUs(plan.asOfDate)) return false;
  const inside = (x: bigint) => (fromUs === null || x >= fromUs) && x < toUs;
  return !lowerEdgesUs(plan.asOfUs).some((e) => inside(e.edge)) && !inside(plan.asOfUs) && !plan.cutHours.some(inside);
}

/** The start of the `grain`-long interval whose open part (start, start + grain) strictly holds `edge`. */
function cutInterval(edge: bigint, grain: bigint): bigint | null {
  const start = floorUs(edge, grain);
  return start + 1n <= edge && edge < start + grain - 1n ? start : null;
}

/**
 * The four lower edges at `asOf` (asOf - w, with each window's length w in seconds), the hours they
 * cut, and asOf's own hour (`asOfHour`), which hour pieces serve whole only when no report of it
 * lies after asOf (window-pieces.ts reads its raw reports otherwise).
 */
export function windowEdges(asOf: Date) {
  const u = usOf(asOf);
  const lowerEdges = lowerEdgesUs(u);
  const lowerCutHours = [...new Set(lowerEdges.map((e) => cutInterval(e.edge, HOUR_US)).filter((x): x is bigint => x !== null))];
  return { asOfUs: u, lowerEdges, lowerCutHours, asOfHour: cutInterval(u, HOUR_US) };
}

export interface CombineInput {
  layout: WarehouseLayout;
  asOf: Date;
  horizonSeconds: number;
  customers: readonly string[];
  /** The state of every partition of the snapshot. */
  states: readonly StateMeta[];
  build: SnapshotFiles;
}

export interface CombinePlan extends CombineInput {
  asOfUs: bigint;
  asOfDate: string;
  /** The states of asOf's date and before that have files. */
  states: readonly StateMeta[];
  /** Those holding a report after asOf (only those of asOf's date can). */
  after: readonly StateMeta[];
  /** The others: each serves the snapshot whole (its hour pieces and its day's series). */
  whole: readonly StateMeta[];
  /** The hours that an edge cuts: the lower edges', and asOf's own when a state of its day holds a report after asOf. */
  cutHours: readonly bigint[];
}

export function planCombine(input: CombineInput): CombinePlan {
  const { asOfUs, lowerCutHours, asOfHour } = windowEdges(input.asOf);
  const asOfDate = dateOfUs(asOfUs);
  const states = input.states.filter((m) => m.date <= asOfDate && m.files.length > 0);
  const after = states.filter((m) => m.maxTs !== null && Date.parse(m.maxTs) > input.asOf.getTime());
  const afterIds = new Set(after.map((m) => m.stateId));
  const cutHours = [...lowerCutHours];
  if (asOfHour !== null && after.some((m) => m.date === dateOfUs(asOfHour))) cutHours.push(asOfHour);
  return { ...input, asOfUs, asOfDate, states, after, whole: states.filter((m) => !afterIds.has(m.stateId)), cutHours };
}

/** What the snapshot holds of one customer. */
export interface CustomerFigures {
  /** Deduplicated reports with ts <= asOf. */
  reports: number;
  streams: number;
  summaryRows: number;
  seriesRows: number;
  /** Days whose series file is the state's own (hard link), and days computed by this run. */
  seriesDaysLinked: number;
  seriesDaysWritten: number;
}

/**
 * What fixes, at asOf, the window class of every whole hour piece lying in [fromUs, toUs) and
 * whether the snapshot reads it (window_class.sql, hour_pieces.sql): where each window's lower edge
 * and asOf sit, and the hours cut there. A piece's earliest instant lo_us is its hour's start h
 * (the hour's first instant) or h + 1 (the rest); it is in a window when lo_us > edge, read when
 * lo_us <= asOf. For an instant x in the span that is decided, for every piece, by x's hour and
 * whether x is its first instant; x before the span puts every piece on one side, after on the
 * other; a cut hour leaves out the rest of that hour.
 */
export function unitSignature(plan: Pick<CombinePlan, 'asOfUs' | 'cutHours'>, fromUs: bigint | null, toUs: bigint): string {
  const place = (x: bigint) => {
    if (fromUs !== null && x < fromUs) return 'before';
    if (x >= toUs) return 'after';
    const h = floorUs(x, HOUR_US);
    return `${h}:${x === h ? 0 : 1}`;
  };
  const edges = lowerEdgesUs(plan.asOfUs).map((e) => place(e.edge));
  const cut = plan.cutHours.filter((h) => (fromUs === null || h >= fromUs) && h < toUs).map(String).sort();
  return [...edges, `asOf ${place(plan.asOfUs)}`, `cut ${cut.join(' ')}`].join(',');
}
