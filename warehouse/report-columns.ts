// The columns of a session report, exactly as session-report.md lists them: the one schema that
// readers, the generator, validation and exports share.
import { quotedIdentifier } from '@duckdb/node-api';

export type Family = 'string' | 'integer' | 'float' | 'boolean' | 'timestamp' | 'map';

export interface ReportColumn {
  name: string;
  /** The DuckDB type readers cast to. */
  type: string;
  family: Family;
  /** Must be present in every file and never null. */
  required: boolean;
  /** A delta or count: a missing value reads as 0 (session-report.md). */
  counter: boolean;
}

const c = (name: string, type: string, family: Family, opts: Partial<Pick<ReportColumn, 'required' | 'counter'>> = {}): ReportColumn => ({
  name,
  type,
  family,
  required: opts.required ?? false,
  counter: opts.counter ?? false,
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
  c('bufferHealth', 'DOUBLE', 'float'),
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

export const REQUIRED_COLUMNS = REPORT_COLUMNS.filter((col) => col.required).map((col) => col.name);

export function reportColumn(name: string): ReportColumn {
  const col = REPORT_COLUMNS.find((x) => x.name === name);
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
] as const;

/**
 * A SELECT list that reads `names` at their session-report.md types: present columns are cast,
 * absent ones read as null (counters as 0, and null counters as 0 too). `present` holds the
 * columns that at least one file of the read has. Built from the catalog above, never from input.
 */
export function projectionSql(names: readonly string[], present: ReadonlySet<string>): string {
  return names
    .map((name) => {
      const col = reportColumn(name);
      const id = quotedIdentifier(col.name);
      if (!present.has(col.name)) {
        return `CAST(${col.counter ? '0' : 'NULL'} AS ${col.type}) AS ${id}`;
      }
      const cast = `CAST(${id} AS ${col.type})`;
      return `${col.counter ? `coalesce(${cast}, 0)` : cast} AS ${id}`;
    })
    .join(',\n  ');
}
