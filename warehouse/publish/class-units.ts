// The session classes of the hour pieces, kept in the state area per class unit (window-pieces.ts:
// a customer's days before asOf's date, or one hour file of asOf's date) and linked into every
// snapshot. A unit's files never change, and the window class of each of its whole hour pieces
// (and whether the snapshot reads it) changes only when an edge or asOf reaches another hour or
// the first instant of one, or the hours cut change: so a unit's classes are computed once an hour
// at most, and a run computes those of the units that are new (a layer it added), not all of them.
// The settled units (those that end by the hour before asOf's) are read through a few files per
// customer instead (SETTLED_GROUPS: a day file per block of days, and an hour file), whose classes
// are made with them: of its units, only the settled layers of asOf's date keep files of their own.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileList, fillSql, quotedString, sqlFile } from '../duckdb/index.ts';
import type { DbSession } from '../duckdb/index.ts';
import { breakdownFileSql, SESSION_CLASSES_ROW_GROUP, windowClassParams } from '../reads/index.ts';
import { dateOfUs, dayStartUs, settledBlockOf, unitSettledForTheDay, unitSignature, type CombinePlan } from '../states/index.ts';
import { hourPiecesSql, slotPiecesSql, type ClassUnit } from '../states/index.ts';
import { classesFile, durableStateFileName, fileMadeOnce } from '../states/index.ts';

/** Bumped when the files' columns or classing change: a new version names new files. */
const VERSION = 'class-units-1';

/**
 * A customer's settled units are read through two groups of files: the `day` files of those whose
 * classes stay for the rest of asOf's date (combine-plan.ts unitSettledForTheDay: the runs of days
 * between the edges, most of the history), a file of each block of days (settledBlockOf), made
 * from their hour files when one of the block's units is new (a new day, an edge that moved, a
 * state rebuilt); and the `hour` file of the others (the days the edges fall in, made with it from
 * their hour files, and the settled layers of asOf's date, read from a file of each), made at the
 * first run of each hour. Until 2026-11-30 they were one sorted copy of a file of each unit, made
 * every hour from all of the history (docs/benchmarks.md, "a tick in history, part 6"), then one
 * day file of all those days, made whole again whenever one of them changed.
 */
const SETTLED_GROUPS = ['day', 'hour'] as const;
type SettledGroup = (typeof SETTLED_GROUPS)[number];

/** The units' session class files by customer, how many of them this run computed, and their union's SQL. */
export interface UnitClasses {
  /**
   * The files the snapshot links, by customer: with `combineBefore`, the classes of the units
   * before it in its day files and its hour file (their rows, each sorted by stream:
   * SETTLED_GROUPS), then each later unit's file.
   */
  files: Map<string, string[]>;
  /** Every unit's classes file, and the combined ones: retention keeps them. */
  used: string[];
  /** Units, and those whose classes this run computed. */
  units: number;
  computed: number;
  unionSql: string;
  /**
   * With `combineBefore`: each customer's files of the units that end by then (its settled
   * classes: summary-bases.ts keeps what they give the summaries), the first of its `files`.
   */
  settled: Map<string, SettledFiles>;
}

/**
 * A customer's settled classes: the files of the units that stay settled for the rest of asOf's
 * date (`day`: a file of each block of days, oldest first; none when there are none) and that of
 * the others (`hour`, null when there are none) (SETTLED_GROUPS).
 */
export interface SettledFiles {
  day: string[];
  hour: string | null;
}

/** The files of a customer's settled classes, `day` first. */
export const settledFileList = (f: SettledFiles): string[] => [...f.day, ...(f.hour === null ? [] : [f.hour])];

/**
 * The session classes file of every unit at asOf (written the first time a run needs it, touched
 * on every use so that retention keeps it), by customer, and the SQL that adds them to the
 * classes of the cut hours in the view `session_classes`. With `combineBefore`
 * (combine-plan.ts settledBeforeUs: the start of the hour before asOf's), a customer's units that
 * end by then (the days before asOf's date, in runs of days: window-pieces.ts; and the layers of
 * asOf's date whose reports all lie before it) are read through a few files of all their rows
 * (SETTLED_GROUPS: those that stay for the rest of the day, a file per block of days, and the
 * others), each named by its units, so that a reader of the snapshot (the API's breakdowns) opens
 * a few files for them instead of one per unit, and the summaries keep what they give
 * (summary-bases.ts); a file is made again only when one of its units is (a day file: when a day
 * of its block joins the group or leaves it, or its state is rebuilt; the hour file: at the first
 * run of an hour, or when a merge replaces a layer of it).
 */
export async function unitSessionClasses(
  s: DbSession,
  plan: Pick<CombinePlan, 'layout' | 'asOf' | 'asOfUs' | 'cutHours'>,
  units: readonly ClassUnit[],
  combineBefore?: bigint,
): Promise<UnitClasses> {
  const { params, types } = windowClassParams(plan.asOf);
  const files = new Map<string, string[]>();
  const used: string[] = [];
  const settled = new Map<string, SettledFiles>();
  let computed = 0;
  const day = { asOfUs: plan.asOfUs, asOfDate: dateOfUs(plan.asOfUs), cutHours: plan.cutHours };
  // A slot unit (the cut hour of a layered state of yesterday) is never settled: it changes with the edge's slot.
  const combined = (u: ClassUnit) => !u.slots && combineBefore !== undefined && u.toUs <= combineBefore;
  const groupOf = (u: ClassUnit): SettledGroup => (unitSettledForTheDay(day, u.fromUs, u.toUs) ? 'day' : 'hour');
  const signatureOf = (u: ClassUnit) =>
    // A slot unit's classes are fixed by its hour, the edge's slot and window (slotPiecesSql).
    u.slots ? `slots ${u.slots.hourUs} ${u.slots.slotUs} ${u.slots.windowSeconds}` : unitSignature(plan, u.fromUs, u.toUs);
  const nameOf = (u: ClassUnit) => [signatureOf(u), ...u.files.map((f) => durableStateFileName(plan.layout, f))];
  const classesOf = (pieces: string, order: boolean) => breakdownFileSql('unit_session_classes', { pieces: `(${pieces})`, order: order ? 'ORDER BY streamId' : '' });
  const make = async (file: string, pieces: string, order: boolean) => {
    const made = await fileMadeOnce(s, file, classesOf(pieces, order), { rowGroupSize: SESSION_CLASSES_ROW_GROUP }, params, types);
    used.push(file);
    return made;
  };
  // The settled units by customer, in two groups: those whose classes stay for the rest of asOf's
  // date (`day`), and the others (`hour`: the days an edge falls in, the settled layers of asOf's date).
  const groups = new Map<string, Record<SettledGroup, ClassUnit[]>>();
  for (const u of units) {
    if (!combined(u)) continue;
    const g = groups.get(u.customerId) ?? { day: [], hour: [] };
    g[groupOf(u)].push(u);
    groups.set(u.customerId, g);
  }
  // The units of neither group: a file each, sorted, linked by the snapshot as it is.
  for (const u of units) {
    if (combined(u)) continue;
    const file = classesFile(plan.layout, u.customerId, unitKey([VERSION, ...nameOf(u)]));
    if (await make(file, u.slots ? slotPiecesSql(u.files, u.slots) : hourPiecesSql(plan, u.files), true)) computed++;
    files.set(u.customerId, [...(files.get(u.customerId) ?? []), file]);
  }
  for (const [customerId, g] of groups) {
    const both: SettledFiles = { day: [], hour: null };
    // The day group, by block of days (settledBlockOf; window-pieces.ts ends a unit at a block's
    // bound): each block's units' classes are made at once into the file that the snapshot links
    // (sorted), from all their hour files, when one of them is new: no file of each unit, no copy.
    // A session of two units of a block is then one row of each class, not one per unit (readers
    // add a session's rows up either way, over files too).
    const blocks = new Map<bigint, ClassUnit[]>();
    for (const u of g.day) {
      const block = settledBlockOf(u.fromUs ?? 0n);
      blocks.set(block, [...(blocks.get(block) ?? []), u]);
    }
    for (const block of [...blocks.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
      const of = blocks.get(block)!;
      const file = classesFile(plan.layout, customerId, unitKey([VERSION, 'day', ...of.flatMap((u) => [...nameOf(u), ''])]));
      if (await make(file, hourPiecesSql(plan, of.flatMap((u) => u.files)), true)) computed += of.length;
      both.day.push(file);
    }
    // The hour group: the days the edges fall in change with every hour, so their classes are
    // made with the hour file, from their hour files (as the day file's are); the settled layers
    // of asOf's date keep theirs from hour to hour, in a file of each (written in no order, under
    // a name of their own, when there is more than one unit: a sorted file is never replaced by an
    // unsorted one), which the hour file reads. Alone, a layer's sorted file is the hour file.
    if (g.hour.length > 0) {
      const asOfDay = dayStartUs(day.asOfDate);
      const direct = g.hour.filter((u) => u.toUs <= asOfDay);
      const kept = g.hour.filter((u) => u.toUs > asOfDay);
      const alone = g.hour.length === 1;
      const keptFiles: string[] = [];
      for (const u of kept) {
        const file = classesFile(plan.layout, customerId, unitKey([VERSION, ...(alone ? [] : ['unsorted']), ...nameOf(u)]));
        if (await make(file, hourPiecesSql(plan, u.files), alone)) computed++;
        keptFiles.push(file);
      }
      if (direct.length === 0 && keptFiles.length === 1) both.hour = keptFiles[0]!;
      else {
        const file = classesFile(plan.layout, customerId, unitKey([VERSION, 'hour', ...direct.flatMap((u) => [...nameOf(u), '']), ...keptFiles.map((f) => path.basename(f))]));
        const sources = [
          ...(direct.length > 0 ? [classesOf(hourPiecesSql(plan, direct.flatMap((u) => u.files)), false)] : []),
          ...(keptFiles.length > 0 ? [`SELECT * FROM read_parquet(${fileList(keptFiles)}, hive_partitioning = false)`] : []),
        ];
        const query = `SELECT * FROM (${sources.map((q) => `(${q})`).join('\nUNION ALL BY NAME\n')}) ORDER BY streamId`;
        const made = await fileMadeOnce(s, file, query, { rowGroupSize: SESSION_CLASSES_ROW_GROUP }, direct.length > 0 ? params : undefined, direct.length > 0 ? types : undefined);
        if (made) computed += direct.length;
        used.push(file);
        both.hour = file;
      }
    }
    settled.set(customerId, both);
    files.set(customerId, [...settledFileList(both), ...(files.get(customerId) ?? [])]);
  }
  return { files, used, units: units.length, computed, unionSql: classesUnionSql(files), settled };
}

/** A classes file's key: a hash of what names it (code constants and state file names). */
const unitKey = (parts: readonly string[]) => createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 24);

/** For each customer with files, a SELECT of their rows with its id as `customer` (code constants and quoted paths). */
export function customerRowsSql(files: ReadonlyMap<string, readonly string[]>): string[] {
  return [...files]
    .filter(([, list]) => list.length > 0)
    .map(([c, list]) => `SELECT ${quotedString(c)} AS customer, * FROM read_parquet(${fileList(list)}, hive_partitioning = false)`);
}

/** customerRowsSql, each `UNION ALL BY NAME`, to follow another relation's rows (session_classes_view.sql). */
export function classesUnionSql(files: ReadonlyMap<string, readonly string[]>): string {
  return customerRowsSql(files)
    .map((select) => `UNION ALL BY NAME ${select}`)
    .join('\n');
}

/**
 * The view `session_classes` (or `view`): the classes of the cut hours and those of the units in
 * `unionSql` (classesUnionSql).
 */
export async function createSessionClassesView(s: DbSession, unionSql: string, view = 'session_classes'): Promise<void> {
  await s.run(fillSql(sqlFile('session_classes_view'), { units: unionSql, view }));
}
