// The columns of a session report, exactly as docs/sdk-ingest.md lists them: the one schema that
// readers, the generator, validation and exports share. Plain data, without DuckDB: the collector's
// batch workers load it (the SELECT list built from it is warehouse/session-reports/projection.ts).
export type Family = 'string' | 'integer' | 'float' | 'boolean' | 'timestamp' | 'map';

export interface ReportColumn {
  name: string;
  /** The DuckDB type readers cast to. */
  type: string;
  family: Family;
  /** Must be present in every file and never null. */
  required: boolean;
  /** A delta or count: a missing value reads as 0 (docs/sdk-ingest.md). */
  counter: boolean;
  /**
   * For numbers and the values of maps: the greatest value accepted (every one must also be
   * finite and >= 0, and whole for integer types). Null for the other columns.
   */
  max: number | null;
}

/** INTEGER's range: a value above it cannot be cast to the contract's type. */
export const INT32_MAX = 2_147_483_647;
/**
 * BIGINT byte counters of one report: 1 TB per interval (a 30 s interval at 100 Gbit/s is 375 GB).
 * Far above any real report, and low enough that a stream's sum over 9 million such reports
 * still fits the BIGINT the figures are cast back to.
 */
export const MAX_BYTES_PER_REPORT = 1e12;
/** bufferHealth in seconds: a day of media buffered ahead is already absurd. */
export const MAX_BUFFER_HEALTH_SECONDS = 86_400;

function defaultMax(type: string): number | null {
  const value = mapValueType(type) ?? type;
  if (value === 'INTEGER') return INT32_MAX;
  if (value === 'BIGINT') return MAX_BYTES_PER_REPORT;
  return null;
}

const c = (name: string, type: string, family: Family, opts: Partial<Pick<ReportColumn, 'required' | 'counter' | 'max'>> = {}): ReportColumn => ({
  name,
  type,
  family,
  required: opts.required ?? false,
  counter: opts.counter ?? false,
  max: opts.max ?? defaultMax(type),
});

export const REPORT_COLUMNS: readonly ReportColumn[] = [
  c('reportId', 'VARCHAR', 'string', { required: true }),
  c('sessionId', 'VARCHAR', 'string', { required: true }),
  c('viewerId', 'VARCHAR', 'string'),
  c('streamId', 'VARCHAR', 'string', { required: true }),
  c('ts', 'TIMESTAMP', 'timestamp', { required: true }),
  c('intervalMs', 'INTEGER', 'integer'),
  c('seq', 'INTEGER', 'integer'),
  c('final', 'BOOLEAN', 'boolean'),
  c('cohort', 'VARCHAR', 'string'),
  c('contentType', 'VARCHAR', 'string'),
  c('bytesOffloaded', 'BIGINT', 'integer', { counter: true }),
  c('bytesFallback', 'BIGINT', 'integer', { counter: true }),
  c('bytesUploaded', 'BIGINT', 'integer', { counter: true }),
  c('peerCount', 'INTEGER', 'integer'),
  c('bufferHealth', 'DOUBLE', 'float', { max: MAX_BUFFER_HEALTH_SECONDS }),
  c('stallCount', 'INTEGER', 'integer', { counter: true }),
  c('stallMs', 'INTEGER', 'integer', { counter: true }),
  c('watchMs', 'INTEGER', 'integer', { counter: true }),
  c('startupMs', 'INTEGER', 'integer'),
  c('bitrateKbps', 'INTEGER', 'integer'),
  c('p2pConnAttempts', 'INTEGER', 'integer', { counter: true }),
  c('p2pConnSuccesses', 'INTEGER', 'integer', { counter: true }),
  c('signalingErrors', 'INTEGER', 'integer', { counter: true }),
  c('validationFailures', 'INTEGER', 'integer', { counter: true }),
  c('busyPeerEvents', 'INTEGER', 'integer', { counter: true }),
  c('fallbackReasons', 'MAP(VARCHAR, INTEGER)', 'map'),
  c('deliveryMode', 'VARCHAR', 'string'),
  c('bytesByPath', 'MAP(VARCHAR, BIGINT)', 'map'),
  c('device', 'VARCHAR', 'string'),
  c('region', 'VARCHAR', 'string'),
  c('sdkVersion', 'VARCHAR', 'string'),
  c('signalingVersion', 'VARCHAR', 'string'),
];

/**
 * Columns the warehouse itself writes into the landing area, not session-report columns: where each
 * row of a compacted file first landed (the base name of that file, and the row there), which the
 * deduplication rule ranks copies by (docs/warehouse-state.md, "Compaction"). Readers accept them,
 * check their types and rows like a report's, and never show them (exports, the catalog).
 */
export const PROVENANCE_COLUMNS: readonly ReportColumn[] = [
  c('_source_file', 'VARCHAR', 'string'),
  c('_source_row', 'BIGINT', 'integer', { max: Number.MAX_SAFE_INTEGER }),
];

/** Every column a landed file may hold that readers know: the report's, then the provenance. */
export const KNOWN_COLUMNS: readonly ReportColumn[] = [...REPORT_COLUMNS, ...PROVENANCE_COLUMNS];

export const REQUIRED_COLUMNS = REPORT_COLUMNS.filter((col) => col.required).map((col) => col.name);

export function reportColumn(name: string): ReportColumn {
  const col = KNOWN_COLUMNS.find((x) => x.name === name);
  if (!col) throw new Error(`unknown report column ${name}`);
  return col;
}

/** The family of a DuckDB type name as DESCRIBE prints it, or null when no family accepts it. */
export function familyOf(duckdbType: string): Family | null {
  const t = duckdbType.toUpperCase();
  if (t === 'VARCHAR' || t.startsWith('VARCHAR(')) return 'string';
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/.test(t)) return 'integer';
  if (/^(FLOAT|DOUBLE|DECIMAL(\(\d+,\s*\d+\))?)$/.test(t)) return 'float';
  if (t === 'BOOLEAN') return 'boolean';
  if (t.startsWith('TIMESTAMP')) return 'timestamp';
  if (t.startsWith('MAP(')) return 'map';
  return null;
}

/** The value type of a `MAP(K, V)` type name (`V`), or null when `type` is not a map. */
export function mapValueType(type: string): string | null {
  const m = /^MAP\((.+)\)$/i.exec(type.trim());
  if (!m) return null;
  const parts = splitTopLevel(m[1]!);
  return parts.length === 2 ? parts[1]!.trim() : null;
}

/** The key type of a `MAP(K, V)` type name, or null when `type` is not a map. */
export function mapKeyType(type: string): string | null {
  const m = /^MAP\((.+)\)$/i.exec(type.trim());
  if (!m) return null;
  const parts = splitTopLevel(m[1]!);
  return parts.length === 2 ? parts[0]!.trim() : null;
}

function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')') depth--;
    else if (s[i] === ',' && depth === 0) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/**
 * Whether a column stored as DuckDB type `stored` can be read as `col`: its family accepts it
 * and, for a map, its keys are strings and its values numbers (anything else cannot be cast).
 */
export function typeAccepts(col: ReportColumn, stored: string): boolean {
  const family = familyOf(stored);
  if (family === null || !familyAccepts(col.family, family)) return false;
  if (col.family !== 'map') return true;
  const key = mapKeyType(stored);
  const value = mapValueType(stored);
  if (key === null || value === null || familyOf(key) !== 'string') return false;
  const vf = familyOf(value);
  return vf === 'integer' || vf === 'float';
}

/** Whether a column stored with `actual` family can be read as `expected` without loss of meaning. */
export function familyAccepts(expected: Family, actual: Family): boolean {
  if (expected === actual) return true;
  // Integers stored as doubles are still numbers; a double stored where an integer is expected is
  // accepted too (SDKs in JavaScript write whole numbers as doubles) and is rounded on read.
  return (expected === 'float' && actual === 'integer') || (expected === 'integer' && actual === 'float');
}

/** The columns the rollups read (the rest are read on demand by exports and reports). */
export const ROLLUP_COLUMNS = [
  'reportId',
  'sessionId',
  'streamId',
  'ts',
  'final',
  'bytesOffloaded',
  'bytesFallback',
  'peerCount',
  'bufferHealth',
  'stallCount',
  // The quality figures and the session dimension rule (earliest report by ts, then seq).
  'seq',
  'stallMs',
  'watchMs',
  'startupMs',
  'p2pConnAttempts',
  'p2pConnSuccesses',
] as const;

/** A session's dimensions, kept in partition states' pieces for breakdowns (docs/warehouse-state.md). */
export const SESSION_DIMENSIONS = ['cohort', 'device', 'region', 'contentType', 'sdkVersion', 'signalingVersion'] as const;

/** The columns a partition state is built from: the rollup's, and the session's dimensions. */
export const STATE_COLUMNS = [...ROLLUP_COLUMNS, ...SESSION_DIMENSIONS] as const;
