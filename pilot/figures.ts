// The figures a pilot report is composed from, computed by the shared SQL (pilot_figures.sql,
// the API's breakdowns for sessions per device, region and version (breakdown_rows.sql),
// pilot_breakdowns.sql for the routing lists, and the series: series_combine.sql over report_pieces.sql) over the
// deduplicated reports of one stream or of every stream of a customer, up to the snapshot's asOf.
import type { DbSession } from '../warehouse/duckdb/index.ts';
import { fillSql, sqlFile } from '../warehouse/duckdb/index.ts';
import { pieceSql } from '../warehouse/figures/index.ts';
import { bucketSeriesSql, querySeries, type BucketRow } from '../warehouse/figures/index.ts';
import { loadStreamReports, type StreamInputs } from '../warehouse/reads/index.ts';
import { REPORT_COLUMNS } from '../warehouse/session-reports/index.ts';
import { breakdownsOfReports, type SessionDimension } from '../warehouse/reads/index.ts';

export interface CohortFigures {
  sessions: number;
  reports: number;
  viewers: number;
  sessionsWithoutViewer: number;
  bytesOffloaded: number;
  bytesFallback: number;
  offloadRatio: number;
  avgPeerCount: number;
  avgBufferHealth: number;
  rebufferEvents: number;
  stallMs: number;
  watchMs: number;
  rebufferRatio: number;
  /** null when no session reported a startup time. */
  startupP95Ms: number | null;
  startupSamples: number;
  p2pConnAttempts: number;
  p2pConnSuccesses: number;
  /** null when no peer connection was attempted. */
  p2pConnectionSuccess: number | null;
  signalingErrors: number;
  validationFailures: number;
  busyPeerEvents: number;
  /** Σ intervalMs: the playback time the reports cover. */
  intervalMs: number;
  firstReportAt: Date;
  lastReportAt: Date;
}

export interface Breakdown {
  kind: 'device' | 'region' | 'sdkVersion' | 'signalingVersion' | 'deliveryMode' | 'path' | 'fallbackReason';
  key: string;
  sessions: number | null;
  reports: number | null;
  /** Bytes (delivery modes, paths) or segments (fallback reasons). */
  amount: number | null;
}

export interface StreamPilotFigures {
  streamId: string;
  all: CohortFigures;
  p2p: CohortFigures | null;
  control: CohortFigures | null;
  breakdowns: Breakdown[];
  /** The report's buckets, every cohort. */
  series: BucketRow[];
  p2pSeries: BucketRow[];
  controlSeries: BucketRow[];
  /** Concurrency over one-minute buckets, every cohort (null: no report). */
  concurrency: Concurrency | null;
}

/** A stream's one-minute series, every cohort, reduced to what the report shows (pilot_concurrency.sql). */
export interface Concurrency {
  /** The most sessions of a minute, and the earliest minute that has them (ms since the epoch). */
  peakSessions: number;
  peakStartMs: number;
  /** Σ sessions over the minutes, and the minutes from the first non-empty one to the last. */
  sessionMinutes: number;
  minutes: number;
}

export const CONCURRENCY_BUCKET_SECONDS = 60;

/** Every stream's concurrency over the session's `reports` (one-minute buckets, reduced in SQL). */
async function concurrencyOf(s: DbSession): Promise<Map<string, Concurrency>> {
  const rows = await s.all<Concurrency & { streamId: string }>(fillSql(sqlFile('pilot_concurrency'), { series: bucketSeriesSql() }), {
    bucket_seconds: CONCURRENCY_BUCKET_SECONDS,
  });
  return new Map(rows.map(({ streamId, ...c }) => [streamId, c]));
}

/** Series of one cohort: the shared SQL over the session's `reports` restricted to it. */
async function cohortSeries(s: DbSession, cohort: 'p2p' | 'control', bucketSeconds: number): Promise<Map<string, BucketRow[]>> {
  // The cohort is a code constant of this module, never input.
  return querySeries(s, bucketSeconds, `(SELECT * FROM reports WHERE coalesce(cohort, 'p2p') = '${cohort}')`);
}

/** The session dimensions whose sessions the report lists (device mix, regions, versions). */
const SESSION_KINDS = ['device', 'region', 'sdkVersion', 'signalingVersion'] as const satisfies readonly (Breakdown['kind'] & SessionDimension)[];

/**
 * Sessions per device, region, SDK and signaling version of every stream: the breakdowns of the
 * API (warehouse/reads/breakdowns.ts) over all of the reports, a session counted once, by its earliest
 * report; a session without a value is listed as `unknown`.
 */
async function sessionBreakdowns(s: DbSession, asOf: Date): Promise<(Breakdown & { streamId: string })[]> {
  const byKind = await breakdownsOfReports(s, asOf, SESSION_KINDS);
  return SESSION_KINDS.flatMap((kind) =>
    byKind.get(kind)!.map((row) => ({ streamId: row.streamId!, kind, key: row.value ?? 'unknown', sessions: row.totalSessions, reports: null, amount: null })),
  );
}

/** Pilot figures of every stream in the session's `reports` table (reports up to asOf). */
export async function computePilotFigures(s: DbSession, asOf: Date, bucketSeconds: number): Promise<Map<string, StreamPilotFigures>> {
  const figures = await s.all<CohortFigures & { streamId: string; cohort: string }>(pieceSql('pilot_figures'));
  const breakdowns = [...(await sessionBreakdowns(s, asOf)), ...(await s.all<Breakdown & { streamId: string }>(sqlFile('pilot_breakdowns')))];
  const series = await querySeries(s, bucketSeconds);
  const concurrency = await concurrencyOf(s);
  const p2p = await cohortSeries(s, 'p2p', bucketSeconds);
  const control = await cohortSeries(s, 'control', bucketSeconds);

  const out = new Map<string, StreamPilotFigures>();
  for (const { streamId, cohort, ...cohortFigures } of figures) {
    let f = out.get(streamId);
    if (!f) {
      f = {
        streamId,
        all: undefined as unknown as CohortFigures,
        p2p: null,
        control: null,
        breakdowns: [],
        series: series.get(streamId) ?? [],
        p2pSeries: p2p.get(streamId) ?? [],
        controlSeries: control.get(streamId) ?? [],
        concurrency: concurrency.get(streamId) ?? null,
      };
      out.set(streamId, f);
    }
    if (cohort === 'all') f.all = cohortFigures;
    else if (cohort === 'p2p') f.p2p = cohortFigures;
    else if (cohort === 'control') f.control = cohortFigures;
  }
  for (const { streamId, ...breakdown } of breakdowns) out.get(streamId)?.breakdowns.push(breakdown);
  return out;
}

/** Load the deduplicated reports (every column) of one stream, or of every stream of the files, then compute. */
export async function loadPilotFigures(
  s: DbSession,
  inputs: StreamInputs,
  streamId: string | null,
  asOf: Date,
  bucketSeconds: number,
): Promise<Map<string, StreamPilotFigures>> {
  await loadStreamReports(s, inputs, streamId, asOf, REPORT_COLUMNS.map((c) => c.name));
  try {
    return await computePilotFigures(s, asOf, bucketSeconds);
  } finally {
    await s.run('DROP TABLE IF EXISTS reports');
  }
}
