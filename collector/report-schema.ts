// The zod schema of one posted session report, derived from the column catalog
// (warehouse/report-columns.ts) so that what the collector accepts is exactly what the warehouse
// reads: JSON names, types and ranges of their Parquet types, id syntax, counters >= 0, maps, and
// `ts` within the accepted window. Unknown fields are dropped, not refused.
import { z } from 'zod';
import { REPORT_COLUMNS, type ReportColumn } from '../warehouse/report-columns.ts';
import { parseStreamId } from '../warehouse/ids.ts';

/** What a valid report becomes in the spool: the columns, with `ts` as epoch microseconds. */
export type SpoolReport = Record<string, unknown> & { reportId: string; streamId: string; ts: number };

const INT32_MAX = 2 ** 31 - 1;
/** Longest text value (ids, versions, regions): enough for any real one, bounded for the spool. */
export const MAX_TEXT_LENGTH = 256;
/** Most entries of a map column, and the longest key. */
export const MAX_MAP_ENTRIES = 64;
const MAX_MAP_KEY_LENGTH = 64;

/** Closed vocabularies of session-report.md (region, versions and map keys are open). */
const VOCABULARIES: Record<string, readonly string[]> = {
  cohort: ['p2p', 'control'],
  contentType: ['live', 'vod'],
  deliveryMode: ['p2p', 'hybrid', 'cdn'],
  device: ['desktop', 'mobile', 'tablet', 'tv', 'other'],
};

const ISO_TS = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Epoch microseconds of an ISO 8601 date-time with a zone (microseconds kept), or null. */
export function isoToMicros(text: string): number | null {
  const m = ISO_TS.exec(text);
  if (!m) return null;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (!Number.isFinite(ms)) return null;
  // Date.parse rolls 2026-02-31 over to March: refuse dates that do not exist.
  const zoneMs = m[3] === 'Z' ? 0 : (m[3]![0] === '-' ? -1 : 1) * (Number(m[3]!.slice(1, 3)) * 60 + Number(m[3]!.slice(4, 6))) * 60_000;
  if (new Date(ms + zoneMs).toISOString().slice(0, 19) !== m[1]) return null;
  const fraction = (m[2] ?? '').padEnd(6, '0').slice(0, 6);
  return ms * 1000 + Number(fraction);
}

function integer(col: ReportColumn): z.ZodType<number> {
  const max = col.type === 'BIGINT' ? Number.MAX_SAFE_INTEGER : INT32_MAX;
  // Every integer of a report counts or measures something: none is negative.
  return z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(0, col.counter ? 'a counter must be 0 or more' : 'must be 0 or more')
    .max(max, `must be at most ${max}`);
}

function mapOf(valueType: string): z.ZodType {
  const max = valueType === 'BIGINT' ? Number.MAX_SAFE_INTEGER : INT32_MAX;
  return z
    .record(
      z.string().min(1, 'a map key must not be empty').max(MAX_MAP_KEY_LENGTH, `a map key is at most ${MAX_MAP_KEY_LENGTH} characters`),
      z.number({ error: 'a map value must be a number' }).int('a map value must be a whole number').min(0, 'a map value must be 0 or more').max(max),
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
          .refine((s) => parseStreamId(s) !== null, 'must be <customerId>:<name> (session-report.md, "Ids")');
      }
      return z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(MAX_TEXT_LENGTH, `at most ${MAX_TEXT_LENGTH} characters`);
    }
    case 'integer':
      return integer(col);
    case 'float':
      return z.number({ error: 'must be a number' }).min(0, 'must be 0 or more').max(1e9, 'must be at most 1e9');
    case 'boolean':
      return z.boolean({ error: 'must be true or false' });
    case 'timestamp':
      // Checked against the clock by `reportSchema` below; here only its form.
      return z.union([z.string(), z.number()], { error: 'must be an ISO 8601 date-time with a zone, or epoch milliseconds' });
    case 'map': {
      const valueType = /,\s*(\w+)\)$/.exec(col.type)![1]!;
      return mapOf(valueType);
    }
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

const BASE = z.object(SHAPE, { error: 'a report must be a JSON object' });

/** Turn a parsed report into its spool form, or say which field is wrong and why. */
export function checkReport(
  value: unknown,
  window: TimeWindow,
): { ok: true; report: SpoolReport } | { ok: false; field: string | null; reason: string } {
  const parsed = BASE.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? String(issue.path[0]) : null;
    const missing = issue.code === 'invalid_type' && field !== null && (value as Record<string, unknown>)?.[field] === undefined;
    return { ok: false, field, reason: missing ? 'is required' : issue.message };
  }
  const report = parsed.data as Record<string, unknown>;
  const ts = report['ts'] as string | number;
  const micros = typeof ts === 'number' ? (Number.isFinite(ts) ? Math.round(ts * 1000) : null) : isoToMicros(ts);
  if (micros === null) return { ok: false, field: 'ts', reason: 'must be an ISO 8601 date-time with a zone (e.g. 2026-11-20T21:14:05.123Z), or epoch milliseconds' };
  const ms = micros / 1000;
  if (ms > window.latestMs) return { ok: false, field: 'ts', reason: 'is too far in the future (check the device clock)' };
  if (ms < window.earliestMs) return { ok: false, field: 'ts', reason: 'is older than the late-data horizon' };
  report['ts'] = micros;
  return { ok: true, report: report as SpoolReport };
}
