// One posted session report, checked against the column catalog (warehouse/session-reports/columns.ts) so
// that what the collector accepts is exactly what the warehouse reads: JSON names, types, the
// catalog's bounds (the ones the warehouse's row rules quarantine a file beyond), id syntax,
// counters >= 0, maps, and `ts` within the accepted window.
// Unknown fields are dropped, not refused. The contract is a zod schema derived from the catalog
// (SessionReportSchema); the hot path runs the same rules compiled into plain per-column checks
// (zod costs ~100 ms per 500-report batch here, the whole budget many times over), and a test
// holds the two to the same verdict on every case.
import { z } from 'zod';
import { REPORT_COLUMNS, type ReportColumn } from '../warehouse/session-reports/index.ts';
import { parseStreamId } from '../warehouse/ids.ts';

/** What a valid report becomes in the spool: the columns, with `ts` as epoch microseconds. */
export type SpoolReport = Record<string, unknown> & { reportId: string; streamId: string; ts: number };

/**
 * The greatest value of a number column, or of a map column's values: the catalog's bound, the
 * one the warehouse's row rules quarantine a file beyond (warehouse/landing/validate-rows.ts).
 */
function bound(col: ReportColumn): number {
  if (col.max === null) throw new Error(`column ${col.name} has no bound in the catalog`);
  return col.max;
}
const atMost = (max: number) => `must be at most ${max}`;
/** The map columns: a report's only nested objects. */
export const MAP_COLUMNS: readonly string[] = REPORT_COLUMNS.filter((c) => c.family === 'map').map((c) => c.name);
/** Longest text value (ids, versions, regions): enough for any real one, bounded for the spool. */
export const MAX_TEXT_LENGTH = 256;
/** Most entries of a map column, and the longest key. */
export const MAX_MAP_ENTRIES = 64;
const MAX_MAP_KEY_LENGTH = 64;

/** Closed vocabularies of docs/sdk-ingest.md (region, versions and map keys are open). */
const VOCABULARIES: Record<string, readonly string[]> = {
  cohort: ['p2p', 'control'],
  contentType: ['live', 'vod'],
  deliveryMode: ['p2p', 'hybrid', 'cdn'],
  device: ['desktop', 'mobile', 'tablet', 'tv', 'other'],
};

/**
 * No lone UTF-16 surrogates: JSON.stringify escapes them, and DuckDB's JSON reader turns such a
 * string into NULL, which would drop an acknowledged report at landing.
 */
export function wellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}
const NOT_UNICODE = 'must be valid Unicode text (no lone surrogates)';

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const ZERO = 48;
const CYCLE_400_YEARS_MS = 146_097 * 86_400_000;

/** The number written by the `n` ASCII digits of `s` at `at`, or -1 when one is not a digit. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const d = s.charCodeAt(i) - ZERO;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * Epoch microseconds of an ISO 8601 date-time with a zone, or null: YYYY-MM-DDTHH:MM:SS, then an
 * optional fraction of 1 to 9 digits (microseconds kept, the rest truncated), then Z or ±HH:MM.
 * Read character by character (a regular expression and its captures cost several times more,
 * once per posted report); test/collector/report-schema.test.ts holds it to that grammar.
 */
export function isoToMicros(text: string): number | null {
  const len = text.length;
  if (len < 20 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return null;
  const y = digits(text, 0, 4);
  const mo = digits(text, 5, 2);
  const d = digits(text, 8, 2);
  const h = digits(text, 11, 2);
  const mi = digits(text, 14, 2);
  const sec = digits(text, 17, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || sec < 0) return null;
  let at = 19;
  let fraction = 0;
  if (text.charCodeAt(at) === 46) {
    // . then 1 to 9 digits: the first six are the microseconds.
    const start = ++at;
    while (at < len && at - start < 10) {
      const c = text.charCodeAt(at) - ZERO;
      if (c < 0 || c > 9) break;
      if (at - start < 6) fraction = fraction * 10 + c;
      at++;
    }
    const n = at - start;
    if (n === 0 || n > 9) return null;
    for (let k = n; k < 6; k++) fraction *= 10;
  }
  let offsetMinutes = 0;
  const zone = text.charCodeAt(at);
  if (zone === 90) {
    if (at + 1 !== len) return null;
  } else if (zone === 43 || zone === 45) {
    if (at + 6 !== len || text.charCodeAt(at + 3) !== 58) return null;
    const zh = digits(text, at + 1, 2);
    const zm = digits(text, at + 4, 2);
    if (zh < 0 || zm < 0 || zh > 23 || zm > 59) return null;
    offsetMinutes = (zone === 45 ? -1 : 1) * (zh * 60 + zm);
  } else {
    return null;
  }
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  // Dates that do not exist (2026-02-29, 24:00) are refused rather than rolled over.
  if (mo < 1 || mo > 12 || d < 1 || d > (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]!) || h > 23 || mi > 59 || sec > 59) return null;
  // Date.UTC reads years 0–99 as 1900–1999: those are counted 400 years (a whole calendar cycle) on.
  const ms = (y < 100 ? Date.UTC(y + 400, mo - 1, d, h, mi, sec) - CYCLE_400_YEARS_MS : Date.UTC(y, mo - 1, d, h, mi, sec)) - offsetMinutes * 60_000;
  return ms * 1000 + fraction;
}

function integer(col: ReportColumn): z.ZodType<number> {
  const max = bound(col);
  // Every integer of a report counts or measures something: none is negative.
  return z
    .number({ error: 'must be a number' })
    // Not .int(): it also refuses unsafe integers, with the same message as fractions.
    .refine(Number.isInteger, 'must be a whole number')
    .min(0, col.counter ? 'a counter must be 0 or more' : 'must be 0 or more')
    .max(max, atMost(max));
}

function mapOf(col: ReportColumn): z.ZodType {
  const max = bound(col);
  return z
    .record(
      z.string().min(1, 'a map key must not be empty').max(MAX_MAP_KEY_LENGTH, `a map key is at most ${MAX_MAP_KEY_LENGTH} characters`).refine(wellFormed, NOT_UNICODE),
      z.number({ error: 'a map value must be a number' }).refine(Number.isInteger, 'a map value must be a whole number').min(0, 'a map value must be 0 or more').max(max, atMost(max)),
      { error: 'must be an object of counts' },
    )
    .refine((m) => Object.keys(m).length <= MAX_MAP_ENTRIES, `at most ${MAX_MAP_ENTRIES} entries`);
}

function fieldSchema(col: ReportColumn): z.ZodType {
  switch (col.family) {
    case 'string': {
      const vocab = VOCABULARIES[col.name];
      if (vocab) return z.enum(vocab as [string, ...string[]], { error: `must be one of ${vocab.join(', ')}` });
      if (col.name === 'streamId') {
        return z
          .string({ error: 'must be a string' })
          .refine((s) => parseStreamId(s) !== null, 'must be <customerId>:<name> (docs/sdk-ingest.md, "Ids")');
      }
      return z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(MAX_TEXT_LENGTH, `at most ${MAX_TEXT_LENGTH} characters`).refine(wellFormed, NOT_UNICODE);
    }
    case 'integer':
      return integer(col);
    case 'float':
      return z.number({ error: 'must be a number' }).min(0, 'must be 0 or more').max(bound(col), atMost(bound(col)));
    case 'boolean':
      return z.boolean({ error: 'must be true or false' });
    case 'timestamp':
      // Checked against the clock by `reportSchema` below; here only its form.
      return z.union([z.string(), z.number()], { error: 'must be an ISO 8601 date-time with a zone, or epoch milliseconds' });
    case 'map':
      return mapOf(col);
  }
}

const SHAPE = Object.fromEntries(
  REPORT_COLUMNS.map((col) => {
    const schema = fieldSchema(col);
    return [col.name, col.required ? schema : schema.nullish()];
  }),
);

export interface TimeWindow {
  /** Epoch ms: the latest acceptable ts (now + allowed clock skew). */
  latestMs: number;
  /** Epoch ms: the oldest acceptable ts (now − late-data horizon). */
  earliestMs: number;
}

const REQUIRED = new Set(REPORT_COLUMNS.filter((c) => c.required).map((c) => c.name));

/** The contract: a report as zod sees it (without the clock check of `ts`). */
export const SessionReportSchema = z.object(SHAPE, { error: 'a report must be a JSON object' });

type Verdict = { ok: true; report: SpoolReport } | { ok: false; field: string | null; reason: string };

/** The zod verdict on a report (slow; the reference the fast checks are tested against). */
export function checkReportWithZod(value: unknown, window: TimeWindow): Verdict {
  const parsed = SessionReportSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? String(issue.path[0]) : null;
    const missing = field !== null && REQUIRED.has(field) && (value as Record<string, unknown>)[field] == null;
    return { ok: false, field, reason: missing ? 'is required' : issue.message };
  }
  return checkTs(parsed.data as Record<string, unknown>, window);
}

// The same rules as plain functions: each returns null when the value is good, else the reason.
type Check = (v: unknown) => string | null;

function integerCheck(col: ReportColumn): Check {
  const max = bound(col);
  const tooLarge = atMost(max);
  const negative = col.counter ? 'a counter must be 0 or more' : 'must be 0 or more';
  return (v) => {
    if (typeof v !== 'number') return 'must be a number';
    if (!Number.isInteger(v)) return 'must be a whole number';
    if (v < 0) return negative;
    if (v > max) return tooLarge;
    return null;
  };
}

function mapCheck(col: ReportColumn): Check {
  const max = bound(col);
  const tooLarge = atMost(max);
  return (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'must be an object of counts';
    const keys = Object.keys(v);
    for (const k of keys) {
      if (k.length === 0) return 'a map key must not be empty';
      if (k.length > MAX_MAP_KEY_LENGTH) return `a map key is at most ${MAX_MAP_KEY_LENGTH} characters`;
      if (!wellFormed(k)) return NOT_UNICODE;
      const x = (v as Record<string, unknown>)[k];
      if (typeof x !== 'number') return 'a map value must be a number';
      if (!Number.isInteger(x)) return 'a map value must be a whole number';
      if (x < 0) return 'a map value must be 0 or more';
      if (x > max) return tooLarge;
    }
    if (keys.length > MAX_MAP_ENTRIES) return `at most ${MAX_MAP_ENTRIES} entries`;
    return null;
  };
}

function columnCheck(col: ReportColumn): Check {
  switch (col.family) {
    case 'string': {
      const vocab = VOCABULARIES[col.name];
      if (vocab) {
        const allowed = new Set(vocab);
        const reason = `must be one of ${vocab.join(', ')}`;
        return (v) => (typeof v === 'string' && allowed.has(v) ? null : reason);
      }
      if (col.name === 'streamId') {
        return (v) => (typeof v !== 'string' ? 'must be a string' : parseStreamId(v) === null ? 'must be <customerId>:<name> (docs/sdk-ingest.md, "Ids")' : null);
      }
      return (v) =>
        typeof v !== 'string'
          ? 'must be a string'
          : v.length === 0
            ? 'must not be empty'
            : v.length > MAX_TEXT_LENGTH
              ? `at most ${MAX_TEXT_LENGTH} characters`
              : !wellFormed(v)
                ? NOT_UNICODE
                : null;
    }
    case 'integer':
      return integerCheck(col);
    case 'float': {
      const max = bound(col);
      const tooLarge = atMost(max);
      return (v) => (typeof v !== 'number' ? 'must be a number' : v < 0 ? 'must be 0 or more' : v > max ? tooLarge : null);
    }
    case 'boolean':
      return (v) => (typeof v === 'boolean' ? null : 'must be true or false');
    case 'timestamp':
      return (v) => (typeof v === 'string' || typeof v === 'number' ? null : 'must be an ISO 8601 date-time with a zone, or epoch milliseconds');
    case 'map':
      return mapCheck(col);
  }
}

const CHECKS = REPORT_COLUMNS.map((col) => ({ name: col.name, required: col.required, check: columnCheck(col) }));

/** The first wrong field of a report and why, or how many known fields it has (null ones count). */
type FieldsVerdict = number | { field: string; reason: string };

/**
 * The per-column checks of CHECKS, in catalog order, compiled into one function with each column's
 * name written out: a property read by a constant name, and a call of one check per call site, are
 * what the JIT makes fast (read by a name held in a variable and called through one shared call
 * site, 32 columns cost about 5.5 µs per report against about 2 µs). The same rules, the same
 * order, the same first failure as a loop over CHECKS would give; only own properties count (a
 * name inherited from Object.prototype is absent, as `Object.hasOwn` says).
 * The generated text is built from the catalog's names only (JSON-quoted), never from input.
 */
function compileChecks(): (input: Record<string, unknown>) => FieldsVerdict {
  const lines = CHECKS.map(({ name, required }, j) => {
    const key = JSON.stringify(name);
    return [
      `v = input[${key}];`,
      `if (v !== undefined && !hasOwn(input, ${key})) v = undefined;`,
      `if (v !== undefined) present++;`,
      required
        ? `if (v === undefined || v === null) return { field: ${key}, reason: 'is required' };`
        : `if (v !== undefined && v !== null) {`,
      `r = c${j}(v);`,
      `if (r !== null) return { field: ${key}, reason: r };`,
      required ? '' : '}',
    ].join('\n');
  });
  const checks = CHECKS.map((c, j) => `const c${j} = checks[${j}];`).join('\n');
  const body = `${checks}\nreturn function checkFields(input) {\nlet present = 0, v, r;\n${lines.join('\n')}\nreturn present;\n};`;
  const make = new Function('checks', 'hasOwn', body) as (checks: readonly Check[], hasOwn: (o: object, k: string) => boolean) => (input: Record<string, unknown>) => FieldsVerdict;
  return make(
    CHECKS.map((c) => c.check),
    Object.hasOwn,
  );
}

const checkFields = compileChecks();

/** Turn a parsed report into its spool form, or say which field is wrong and why (first one). */
export function checkReport(value: unknown, window: TimeWindow): Verdict {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, field: null, reason: 'a report must be a JSON object' };
  const input = value as Record<string, unknown>;
  const present = checkFields(input);
  if (typeof present !== 'number') return { ok: false, field: present.field, reason: present.reason };
  // The common case, nothing but known fields: the parsed object itself is kept (no copy to
  // allocate); otherwise a copy without the unknown fields.
  if (Object.keys(input).length === present) return checkTs(input, window);
  const report: Record<string, unknown> = {};
  for (const { name } of CHECKS) {
    const v = Object.hasOwn(input, name) ? input[name] : undefined;
    if (v !== undefined && v !== null) report[name] = v;
  }
  return checkTs(report, window);
}

function checkTs(report: Record<string, unknown>, window: TimeWindow): Verdict {
  const ts = report['ts'] as string | number;
  const micros = typeof ts === 'number' ? (Number.isFinite(ts) ? Math.round(ts * 1000) : null) : isoToMicros(ts);
  if (micros === null) return { ok: false, field: 'ts', reason: 'must be an ISO 8601 date-time with a zone (e.g. 2026-11-20T21:14:05.123Z), or epoch milliseconds' };
  const ms = micros / 1000;
  if (ms > window.latestMs) return { ok: false, field: 'ts', reason: 'is too far in the future (check the device clock)' };
  if (ms < window.earliestMs) return { ok: false, field: 'ts', reason: 'is older than the late-data horizon' };
  report['ts'] = micros;
  return { ok: true, report: report as SpoolReport };
}
