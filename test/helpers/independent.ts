// The tests' own computation of every figure, in plain SQL straight over the raw files: written
// independently of warehouse/sql (window functions, correlated subqueries, no partial sums), so
// that agreement means something.
import path from 'node:path';
import { TIMESTAMP } from '@duckdb/node-api';
import { expect } from 'vitest';
import type { Db } from '../../warehouse/duckdb/db.ts';
import { timestampParam } from '../../warehouse/duckdb/param-values.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { servedWindowSeconds, windowSeconds, type ServedWindow, type WindowName } from '../../warehouse/figures/windows.ts';

export type Row = Record<string, unknown>;

/** Filters of a breakdown by dimension name (null: the value null). */
export type IndependentFilters = Record<string, { keep: readonly (string | null)[]; drop: readonly (string | null)[] }>;

export class Independent {
  private constructor(
    private readonly db: Db,
    readonly asOf: Date,
  ) {}

  /** Deduplicate (first copy by file name, then row in the file) every landed report with ts <= asOf into `ind_reports`. */
  static async create(db: Db, rawRoot: string, asOf: Date): Promise<Independent> {
    await db.withSession((s) =>
      s.run(
        `CREATE OR REPLACE TABLE ind_reports AS
         SELECT * EXCLUDE (rn) FROM (
           SELECT *, row_number() OVER (PARTITION BY reportId ORDER BY filename, file_row_number) AS rn
           FROM read_parquet(${quotedString(path.join(rawRoot, '*', '*', '*.parquet'))}, union_by_name = true, filename = true, file_row_number = true)
         ) WHERE rn = 1 AND ts <= $as_of`,
        { as_of: timestampParam(asOf) },
        { as_of: TIMESTAMP },
      ),
    );
    return new Independent(db, asOf);
  }

  async query(sql: string, params: Record<string, unknown> = {}): Promise<Row[]> {
    const types = Object.fromEntries(Object.keys(params).filter((k) => k === 'as_of' || k === 'lower' || k === 'end').map((k) => [k, TIMESTAMP]));
    return this.db.withSession((s) => s.all<Row>(sql, params as never, types));
  }

  private lower(window: WindowName): Date | null {
    const seconds = windowSeconds(window);
    return seconds === null ? null : new Date(this.asOf.getTime() - seconds * 1000);
  }

  /** The ten summary fields of every stream with a report in the window (optionally one stream). */
  async summaries(window: WindowName, streamId?: string): Promise<Row[]> {
    const lower = this.lower(window);
    return this.query(
      `WITH win AS (
         SELECT * FROM ind_reports WHERE ($lower IS NULL OR ts > $lower) AND ($stream IS NULL OR streamId = $stream)
       ),
       session_peer AS (SELECT streamId, sessionId, avg(peerCount) AS mean_peers FROM win GROUP BY streamId, sessionId),
       latest AS (SELECT streamId, sessionId, max(ts) AS last_ts FROM ind_reports GROUP BY streamId, sessionId),
       ended AS (
         SELECT DISTINCT r.streamId, r.sessionId
         FROM ind_reports r JOIN latest l ON r.streamId = l.streamId AND r.sessionId = l.sessionId AND r.ts = l.last_ts
         WHERE r.final
       ),
       active AS (
         SELECT l.streamId, count(*) AS n
         FROM latest l LEFT JOIN ended e ON e.streamId = l.streamId AND e.sessionId = l.sessionId
         WHERE l.last_ts >= $as_of - INTERVAL 120 SECOND AND e.sessionId IS NULL
         GROUP BY l.streamId
       )
       SELECT
         win.streamId,
         count(DISTINCT win.sessionId) AS totalSessions,
         sum(win.bytesOffloaded) AS totalBytesOffloaded,
         sum(win.bytesFallback) AS totalBytesFallback,
         coalesce(sum(win.bytesOffloaded) / nullif(sum(win.bytesOffloaded) + sum(win.bytesFallback), 0), 0) AS avgOffloadRatio,
         coalesce((SELECT avg(mean_peers) FROM session_peer sp WHERE sp.streamId = win.streamId), 0) AS avgPeerCount,
         coalesce(avg(win.bufferHealth), 0) AS avgBufferHealth,
         coalesce((SELECT n FROM active a WHERE a.streamId = win.streamId), 0) AS activePeers,
         max(win.ts) AS lastSeenAt
       FROM win GROUP BY win.streamId ORDER BY win.streamId`,
      { as_of: timestampParam(this.asOf), lower: lower ? timestampParam(lower) : null, stream: streamId ?? null },
    );
  }

  /** Every non-empty bucket of one stream (or all), start as epoch ms. */
  async series(bucketSeconds: number, streamId?: string): Promise<Row[]> {
    return this.query(
      `WITH b AS (
         SELECT *, to_timestamp(floor(epoch(ts) / ${bucketSeconds}) * ${bucketSeconds}) AS bucket
         FROM ind_reports WHERE $stream IS NULL OR streamId = $stream
       ),
       session_peer AS (SELECT streamId, bucket, sessionId, avg(peerCount) AS mean_peers FROM b GROUP BY ALL)
       SELECT streamId, epoch_ms(bucket) AS start, count(DISTINCT sessionId) AS sessions,
              sum(bytesOffloaded) AS bytesOffloaded, sum(bytesFallback) AS bytesFallback,
              coalesce(sum(bytesOffloaded) / nullif(sum(bytesOffloaded) + sum(bytesFallback), 0), 0) AS offloadRatio,
              coalesce((SELECT avg(mean_peers) FROM session_peer sp WHERE sp.streamId = b.streamId AND sp.bucket = b.bucket), 0) AS avgPeerCount,
              coalesce(avg(bufferHealth), 0) AS avgBufferHealth,
              sum(stallCount) AS rebufferEvents
       FROM b GROUP BY streamId, bucket ORDER BY streamId, bucket`,
      { stream: streamId ?? null },
    );
  }

  /**
   * A breakdown (docs/sdk-ingest.md, "Session dimensions"), straight from the reports: each
   * session's dimensions are those of its first report in the window by (ts, seq), found with a
   * window function; `streams` limits it to the streams whose id starts with one of the prefixes
   * (a stream id, or `<customer>:`), none: every stream. Filters are spliced as quoted literals
   * (test values). `by` null: one row of every kept session. `end`: the window ends there instead
   * of at asOf (a previous period).
   */
  async breakdown(window: ServedWindow, q: { by: string | null; streams?: string[]; filters?: IndependentFilters; end?: Date }): Promise<Row[]> {
    const end = q.end ?? this.asOf;
    const seconds = servedWindowSeconds(window);
    const lower = seconds === null ? null : new Date(end.getTime() - seconds * 1000);
    const dims = ['cohort', 'device', 'region', 'contentType', 'sdkVersion', 'signalingVersion'];
    const scope = q.streams ? `(${q.streams.map((p) => (p.endsWith(':') ? `starts_with(streamId, ${quotedString(p)})` : `streamId = ${quotedString(p)}`)).join(' OR ')})` : 'true';
    const matches = (d: string, values: readonly (string | null)[]) =>
      values.length === 0 ? 'false' : `(${values.map((v) => (v === null ? `f.${d} IS NULL` : `coalesce(f.${d} = ${quotedString(v)}, false)`)).join(' OR ')})`;
    const conditions = Object.entries(q.filters ?? {}).map(([d, f]) => `${f.keep.length > 0 ? matches(d, f.keep) : 'true'} AND NOT ${matches(d, f.drop)}`);
    return this.query(
      `WITH win AS (
         SELECT * FROM ind_reports WHERE ($lower IS NULL OR ts > $lower) AND ts <= $end AND ${scope}
       ),
       firsts AS (
         SELECT * FROM (
           SELECT streamId, sessionId, ${dims.join(', ')},
                  row_number() OVER (PARTITION BY streamId, sessionId ORDER BY ts, seq NULLS LAST, ${dims.map((d) => `${d} NULLS LAST`).join(', ')}) AS rn
           FROM win
         ) WHERE rn = 1
       ),
       kept AS (
         SELECT f.streamId, f.sessionId, ${q.by === null ? 'NULL::VARCHAR' : `f.${q.by}`} AS value FROM firsts f WHERE ${conditions.length > 0 ? conditions.join(' AND ') : 'true'}
       ),
       sess AS (
         SELECT k.streamId, k.sessionId, k.value, avg(w.peerCount) AS mean_peers, max(w.startupMs) AS startup
         FROM kept k JOIN win w ON w.streamId = k.streamId AND w.sessionId = k.sessionId
         GROUP BY ALL
       )
       SELECT
         k.value,
         count(DISTINCT (w.streamId, w.sessionId)) AS totalSessions,
         sum(w.bytesOffloaded) AS totalBytesOffloaded,
         sum(w.bytesFallback) AS totalBytesFallback,
         coalesce(sum(w.bytesOffloaded) / nullif(sum(w.bytesOffloaded) + sum(w.bytesFallback), 0), 0) AS avgOffloadRatio,
         coalesce((SELECT avg(mean_peers) FROM sess s WHERE s.value IS NOT DISTINCT FROM k.value), 0) AS avgPeerCount,
         coalesce(avg(w.bufferHealth), 0) AS avgBufferHealth,
         sum(w.stallCount) AS rebufferEvents,
         coalesce(sum(w.stallMs) / nullif(sum(w.watchMs) + sum(w.stallMs), 0), 0) AS rebufferRatio,
         (SELECT quantile_cont(startup, 0.95) FROM sess s WHERE s.value IS NOT DISTINCT FROM k.value) AS startupTimeP95Ms,
         sum(w.p2pConnSuccesses) / nullif(sum(w.p2pConnAttempts), 0) AS p2pConnectionSuccess
       FROM kept k JOIN win w ON w.streamId = k.streamId AND w.sessionId = k.sessionId
       GROUP BY k.value
       ORDER BY totalSessions DESC, k.value NULLS LAST`,
      { lower: lower ? timestampParam(lower) : null, end: timestampParam(end) },
    );
  }

  /** Platform-wide figures of a window. */
  async platform(window: WindowName): Promise<Row> {
    const lower = this.lower(window);
    const [row] = await this.query(
      `WITH win AS (SELECT * FROM ind_reports WHERE $lower IS NULL OR ts > $lower),
            sp AS (SELECT streamId, sessionId, avg(peerCount) AS m FROM win GROUP BY ALL)
       SELECT count(DISTINCT streamId) AS streams,
              (SELECT count(*) FROM sp) AS totalSessions,
              coalesce(sum(bytesOffloaded), 0) AS totalBytesOffloaded, coalesce(sum(bytesFallback), 0) AS totalBytesFallback,
              coalesce(sum(bytesOffloaded) / nullif(sum(bytesOffloaded) + sum(bytesFallback), 0), 0) AS avgOffloadRatio,
              coalesce((SELECT avg(m) FROM sp), 0) AS avgPeerCount, coalesce(avg(bufferHealth), 0) AS avgBufferHealth,
              max(ts) AS lastSeenAt
       FROM win`,
      { lower: lower ? timestampParam(lower) : null },
    );
    return row!;
  }
}

/** Plain JS values: bigints (Arrow's 64-bit integers) as numbers where exact, timestamps as ISO strings. */
export function norm(v: unknown): unknown {
  if (typeof v === 'bigint' && Number.isSafeInteger(Number(v))) return Number(v);
  if (v instanceof Date) return v.toISOString();
  return v;
}

/** What toBeCloseTo(x, 9) allows. */
const CLOSE_9 = 10 ** -9 / 2;

/**
 * Integers must be equal; averages agree to 9 decimals (the plain SQL sums doubles in parallel).
 * A figure that passes is passed by the test of the matcher itself (toBeCloseTo's, or identity,
 * which toEqual accepts), without building an assertion: the figure tests compare hundreds of
 * thousands of figures, and an assertion for each took much of their CPU time. Any other figure
 * goes to the matcher, which decides and says what differs.
 */
export function expectSameFigure(ours: unknown, theirs: unknown, what: string): void {
  const o = norm(ours);
  const t = norm(theirs);
  if (typeof o === 'number' && typeof t === 'number' && !(Number.isInteger(o) && Number.isInteger(t))) {
    if ((o === t && (o === Number.POSITIVE_INFINITY || o === Number.NEGATIVE_INFINITY)) || Math.abs(o - t) < CLOSE_9) return;
    expect(o, what).toBeCloseTo(t, 9);
  } else {
    if (Object.is(o, t) && (o === null || typeof o !== 'object')) return;
    expect(o, what).toEqual(t);
  }
}

/** Compare every field of `theirs` in each row (matched by position). */
export function expectSameRows(ours: Row[], theirs: Row[], what: string): void {
  expect(ours.length, `${what}: rows`).toBe(theirs.length);
  ours.forEach((o, i) => {
    for (const k of Object.keys(theirs[i]!)) expectSameFigure(o[k], theirs[i]![k], `${what} row ${i} ${k}`);
  });
}
