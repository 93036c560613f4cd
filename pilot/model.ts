// The pilot report (docs/api.md, "Pilot report"; docs/api.md, "Pilot report JSON"),
// composed from a stream's figures, the tenant's rates and the platform's live configuration.
// Pure: the same inputs give the same report, whoever renders it and when.
import type { PlatformConfig } from '../config/platform.ts';
import { costOf, type Rates } from '../billing/cost-rules.ts';
import { fillBuckets, toBucketJson, type BucketRow } from '../warehouse/figures/index.ts';
import { REPORT_VERSION, type CohortResult, type Conclusion, type Criterion, type PilotReport, type SteadyState, type WindowFigures } from './pilot-report-schema.ts';
import { CONCURRENCY_BUCKET_SECONDS, type Breakdown, type CohortFigures, type StreamPilotFigures } from './figures.ts';

export { REPORT_VERSION } from './pilot-report-schema.ts';
export type { CohortResult, Conclusion, Criterion, PilotReport, SteadyState, WindowFigures } from './pilot-report-schema.ts';

export interface PilotInput {
  streamId: string;
  snapshot: { id: string; asOf: string };
  bucketSeconds: number;
  figures: StreamPilotFigures;
  tenant: { id: string; name: string; cdnPricePerGb: number | null; savingsSharePct: number } | null;
  platform: PlatformConfig;
}

const ratio = (part: number, whole: number) => (whole > 0 ? part / whole : 0);
const iso = (ms: number) => new Date(ms).toISOString();

/** Every bucket from the first non-empty one to the last, the empty ones with zeros. */
export function filledSeries(rows: readonly BucketRow[], bucketSeconds: number): BucketRow[] {
  return rows.length === 0 ? [] : fillBuckets(rows, rows[0]!.startMs, rows[rows.length - 1]!.startMs, bucketSeconds);
}

/**
 * Steady state (docs/api.md): the buckets from the first report to the last; the first is the
 * cold-start window, the last the final one, and the steady-state offload ratio is byte-weighted
 * over the buckets between them (over all buckets when there are fewer than three).
 */
export function steadyStateOf(rows: readonly BucketRow[], bucketSeconds: number): SteadyState {
  const buckets = filledSeries(rows, bucketSeconds);
  const windowOf = (b: BucketRow | undefined): WindowFigures | null =>
    b
      ? {
          start: iso(b.startMs),
          end: iso(b.startMs + bucketSeconds * 1000),
          bytesOffloaded: b.bytesOffloaded,
          bytesFallback: b.bytesFallback,
          offloadRatio: ratio(b.bytesOffloaded, b.bytesOffloaded + b.bytesFallback),
        }
      : null;
  const steady = buckets.length < 3 ? buckets : buckets.slice(1, -1);
  const off = steady.reduce((a, b) => a + b.bytesOffloaded, 0);
  const fb = steady.reduce((a, b) => a + b.bytesFallback, 0);
  return {
    offloadRatio: ratio(off, off + fb),
    coldStart: windowOf(buckets[0]),
    final: windowOf(buckets[buckets.length - 1]),
    buckets: buckets.length,
    steadyBuckets: steady.length,
  };
}

function cohortResult(c: CohortFigures | null, series: readonly BucketRow[], bucketSeconds: number): CohortResult | null {
  if (!c) return null;
  return {
    sessions: c.sessions,
    bytesOffloaded: c.bytesOffloaded,
    bytesFallback: c.bytesFallback,
    offloadRatio: c.offloadRatio,
    steadyStateOffloadRatio: steadyStateOf(series, bucketSeconds).offloadRatio,
    rebufferEvents: c.rebufferEvents,
    rebufferRatio: c.rebufferRatio,
    startupP95Ms: c.startupP95Ms,
    avgPeerCount: c.avgPeerCount,
    avgBufferHealth: c.avgBufferHealth,
    p2pConnectionSuccess: c.p2pConnectionSuccess,
    signalingErrors: c.signalingErrors,
  };
}

/** Sessions per key of a breakdown, with shares of the whole, largest first. */
function sessionShares(breakdowns: readonly Breakdown[], kind: Breakdown['kind'], total: number) {
  return breakdowns
    .filter((b) => b.kind === kind)
    .map((b) => ({ key: b.key, sessions: b.sessions ?? 0, share: ratio(b.sessions ?? 0, total) }))
    .sort((a, b) => b.sessions - a.sessions || a.key.localeCompare(b.key));
}

function amounts(breakdowns: readonly Breakdown[], kind: Breakdown['kind']) {
  const list = breakdowns.filter((b) => b.kind === kind);
  const total = list.reduce((a, b) => a + (b.amount ?? 0), 0);
  return list
    .map((b) => ({ key: b.key, amount: b.amount ?? 0, reports: b.reports ?? 0, sessions: b.sessions ?? 0, share: ratio(b.amount ?? 0, total) }))
    .sort((a, b) => b.amount - a.amount || a.key.localeCompare(b.key));
}

const fmt = (v: number | null, digits = 3) => (v === null ? 'no data' : Number(v.toFixed(digits)).toString());

function conclusionOf(input: PilotInput, report: Omit<PilotReport, 'conclusion'>, assumedRate: boolean): Conclusion {
  const c = input.platform.pilot.criteria;
  const r = report.results;
  const p2p = r.cohorts.p2p;
  const control = r.cohorts.control;
  const criteria: Criterion[] = [];
  const add = (id: string, description: string, threshold: number, actual: number | null, passed: boolean) =>
    criteria.push({ id, description, threshold, actual, passed });

  add('min_sessions', `At least ${c.minSessions} sessions`, c.minSessions, r.sessions, r.sessions >= c.minSessions);
  const steady = p2p ? p2p.steadyStateOffloadRatio : null;
  add('steady_state_offload', `Steady-state offload of peer-assisted sessions at least ${c.minSteadyStateOffload}`, c.minSteadyStateOffload, steady, steady !== null && steady >= c.minSteadyStateOffload);
  const conn = p2p?.p2pConnectionSuccess ?? null;
  add('p2p_connection_success', `P2P connection success at least ${c.minP2pConnectionSuccess}`, c.minP2pConnectionSuccess, conn, conn !== null && conn >= c.minP2pConnectionSuccess);
  add('validation_failures', `At most ${c.maxValidationFailures} segments failing validation`, c.maxValidationFailures, report.routing.validationFailures, report.routing.validationFailures <= c.maxValidationFailures);
  const rebuffer = p2p ? p2p.rebufferRatio : null;
  if (control) {
    const threshold = control.rebufferRatio * c.maxRebufferRatioVsControl;
    add('rebuffer_ratio', `Rebuffer ratio no worse than ${c.maxRebufferRatioVsControl} × the control cohort's`, threshold, rebuffer, rebuffer !== null && rebuffer <= threshold);
  } else {
    add('rebuffer_ratio', `Rebuffer ratio at most ${c.maxRebufferRatioWithoutControl} (no control cohort ran)`, c.maxRebufferRatioWithoutControl, rebuffer, rebuffer !== null && rebuffer <= c.maxRebufferRatioWithoutControl);
  }
  const startup = p2p ? p2p.startupP95Ms : null;
  if (control && control.startupP95Ms !== null) {
    const threshold = control.startupP95Ms + c.maxStartupP95IncreaseMsVsControl;
    add('startup_p95', `Startup time p95 no more than ${c.maxStartupP95IncreaseMsVsControl} ms above the control cohort's`, threshold, startup, startup !== null && startup <= threshold);
  } else {
    add('startup_p95', `Startup time p95 at most ${c.maxStartupP95MsWithoutControl} ms (no control cohort to compare with)`, c.maxStartupP95MsWithoutControl, startup, startup !== null && startup <= c.maxStartupP95MsWithoutControl);
  }

  const risks: string[] = [];
  if (!control) risks.push('No CDN-only control cohort ran: rebuffering and startup are judged against absolute thresholds, not against a control.');
  if (assumedRate) risks.push(`No CDN rate is on file for the tenant: costs assume the platform default of ${report.cost.cdnPricePerGb} USD/GB.`);
  if (r.sessions < input.platform.pilot.risks.smallSampleSessions) risks.push(`Small sample: ${r.sessions} sessions (fewer than ${input.platform.pilot.risks.smallSampleSessions}).`);
  const errorsPerSession = ratio(r.signalingErrors, r.sessions);
  if (errorsPerSession > input.platform.pilot.risks.maxSignalingErrorsPerSession) {
    risks.push(`High signaling errors: ${fmt(errorsPerSession)} per session (more than ${input.platform.pilot.risks.maxSignalingErrorsPerSession}).`);
  }
  if (report.routing.validationFailures > 0) risks.push(`${report.routing.validationFailures} peer segments failed signature or hash validation.`);
  if (report.eventEconomics.crossCheck.flagged) {
    risks.push(`The event forecast method is off by more than ${input.platform.pilot.forecastTolerance * 100} % on the pilot itself (ratio ${fmt(report.eventEconomics.crossCheck.ratio)}): treat the forecast with care.`);
  }
  const requiredFixes = criteria
    .filter((x) => !x.passed)
    .map((x) => `${x.id}: ${x.description.charAt(0).toLowerCase()}${x.description.slice(1)}; actual ${fmt(x.actual)} against ${fmt(x.threshold)}.`);
  return {
    assessment: criteria.every((x) => x.passed) ? 'pass' : 'review',
    criteria,
    risks,
    requiredFixes,
    operator: { approvedPublicClaims: null, finalSignOff: null },
  };
}

export function composePilotReport(input: PilotInput): PilotReport {
  const { figures: f, bucketSeconds } = input;
  const p2p = cohortResult(f.p2p, f.p2pSeries, bucketSeconds);
  const control = cohortResult(f.control, f.controlSeries, bucketSeconds);
  const rates = ratesOf(input);
  const cost = costOf(f.all.bytesOffloaded, rates, input.platform.billing.defaultCdnPricePerGb);
  const report: Omit<PilotReport, 'conclusion'> = {
    reportVersion: REPORT_VERSION,
    streamId: input.streamId,
    customerId: input.streamId.slice(0, input.streamId.indexOf(':')),
    tenant: input.tenant ? { id: input.tenant.id, name: input.tenant.name } : null,
    snapshot: input.snapshot,
    bucketSeconds,
    metadata: metadataOf(input),
    configuration: configurationOf(input),
    results: resultsOf(input, p2p, control),
    routing: routingOf(f),
    cost,
    eventEconomics: eventEconomicsOf(input, p2p, rates),
  };
  return { ...report, conclusion: conclusionOf(input, report, cost.assumedRate) };
}

/** The tenant's rates, or the platform's default share when the stream's tenant is unknown. */
function ratesOf(input: PilotInput): Rates {
  return input.tenant
    ? { cdnPricePerGb: input.tenant.cdnPricePerGb, savingsSharePct: input.tenant.savingsSharePct }
    : { cdnPricePerGb: null, savingsSharePct: input.platform.billing.defaultSavingsSharePct };
}

type Report = Omit<PilotReport, 'conclusion'>;

function metadataOf(input: PilotInput): Report['metadata'] {
  const all = input.figures.all;
  const shares = (kind: Breakdown['kind']) => sessionShares(input.figures.breakdowns, kind, all.sessions);
  return {
    dateRange: {
      from: all.firstReportAt.toISOString(),
      to: all.lastReportAt.toISOString(),
      hours: (all.lastReportAt.getTime() - all.firstReportAt.getTime()) / 3_600_000,
    },
    streamsTested: [input.streamId],
    sessions: all.sessions,
    viewers: { count: all.viewers, sessionsWithoutViewerId: all.sessionsWithoutViewer },
    deviceMix: shares('device').map((d) => ({ device: d.key, sessions: d.sessions, share: d.share })),
    regions: shares('region').map((d) => ({ region: d.key, sessions: d.sessions, share: d.share })),
    signalingDeployment: input.platform.live.signalingDeployment,
  };
}

function configurationOf(input: PilotInput): Report['configuration'] {
  const { breakdowns, all } = input.figures;
  const live = input.platform.live;
  return {
    sdkVersions: sessionShares(breakdowns, 'sdkVersion', all.sessions).map((d) => ({ version: d.key, sessions: d.sessions, share: d.share })),
    signalingVersions: sessionShares(breakdowns, 'signalingVersion', all.sessions).map((d) => ({ version: d.key, sessions: d.sessions, share: d.share })),
    remoteConfigPolicy: live.remoteConfigPolicy,
    uploadCapsKbps: live.uploadCapsKbps,
    authMode: live.authMode,
    telemetryRetentionDays: live.telemetryRetentionDays,
    dataRegion: live.dataRegion,
  };
}

function resultsOf(input: PilotInput, p2p: CohortResult | null, control: CohortResult | null): Report['results'] {
  const { figures: f, bucketSeconds } = input;
  const all = f.all;
  return {
    sessions: all.sessions,
    bytesOffloaded: all.bytesOffloaded,
    bytesFallback: all.bytesFallback,
    bytesDelivered: all.bytesOffloaded + all.bytesFallback,
    offloadRatio: all.offloadRatio,
    steadyState: steadyStateOf(f.series, bucketSeconds),
    rebufferEvents: all.rebufferEvents,
    rebufferRatio: all.rebufferRatio,
    startupP95Ms: all.startupP95Ms,
    avgPeerCount: all.avgPeerCount,
    avgBufferHealth: all.avgBufferHealth,
    p2pConnectionSuccess: all.p2pConnectionSuccess,
    signalingErrors: all.signalingErrors,
    cohorts: { p2p, control },
    controlDeltas: controlDeltasOf(p2p, control),
    series: filledSeries(f.series, bucketSeconds).map(toBucketJson),
  };
}

function controlDeltasOf(p2p: CohortResult | null, control: CohortResult | null): Report['results']['controlDeltas'] {
  if (!p2p || !control) return null;
  return {
    offloadRatio: p2p.offloadRatio - control.offloadRatio,
    rebufferRatio: p2p.rebufferRatio - control.rebufferRatio,
    startupP95Ms: p2p.startupP95Ms !== null && control.startupP95Ms !== null ? p2p.startupP95Ms - control.startupP95Ms : null,
    avgBufferHealth: p2p.avgBufferHealth - control.avgBufferHealth,
  };
}

function routingOf(f: StreamPilotFigures): Report['routing'] {
  return {
    fallbackReasons: amounts(f.breakdowns, 'fallbackReason').map((r) => ({ reason: r.key, segments: r.amount, share: r.share })),
    deliveryModes: amounts(f.breakdowns, 'deliveryMode').map((m) => ({ mode: m.key, reports: m.reports, sessions: m.sessions, bytes: m.amount, share: m.share })),
    paths: amounts(f.breakdowns, 'path').map((p) => ({ path: p.key, bytes: p.amount, share: p.share })),
    validationFailures: f.all.validationFailures,
    busyPeerEvents: f.all.busyPeerEvents,
  };
}

/**
 * Event economics: the forecast method is concurrency × delivered bitrate × duration, checked
 * against the pilot itself. Concurrency: the one-minute series reduced in SQL
 * (pilot_concurrency.sql); empty minutes count as 0.
 */
function eventEconomicsOf(input: PilotInput, p2p: CohortResult | null, rates: Rates): Report['eventEconomics'] {
  const f = input.figures;
  const c = f.concurrency;
  const delivered = f.all.bytesOffloaded + f.all.bytesFallback;
  const bitrateBps = f.all.intervalMs > 0 ? (8 * delivered) / (f.all.intervalMs / 1000) : 0;
  const forecastOffloadRatio = p2p ? p2p.steadyStateOffloadRatio : steadyStateOf(f.series, input.bucketSeconds).offloadRatio;
  return {
    peakConcurrency: { sessions: c?.peakSessions ?? 0, at: c ? iso(c.peakStartMs) : null, bucketSeconds: CONCURRENCY_BUCKET_SECONDS },
    averageDeliveredBitrateKbps: bitrateBps / 1000,
    forecast: eventForecast(input, bitrateBps, forecastOffloadRatio, rates),
    crossCheck: forecastCrossCheck(input, bitrateBps, delivered),
  };
}

/** The forecast of an event of the configured duration at the pilot's peak concurrency. */
function eventForecast(input: PilotInput, bitrateBps: number, offloadRatio: number, rates: Rates): Report['eventEconomics']['forecast'] {
  const { platform } = input;
  const eventSeconds = platform.pilot.eventDurationHours * 3600;
  const forecastBytes = (input.figures.concurrency?.peakSessions ?? 0) * (bitrateBps / 8) * eventSeconds;
  const forecastOffloaded = forecastBytes * offloadRatio;
  return {
    durationHours: platform.pilot.eventDurationHours,
    concurrentViewers: input.figures.concurrency?.peakSessions ?? 0,
    deliveredGb: forecastBytes / 1e9,
    offloadRatio,
    offloadedGb: forecastOffloaded / 1e9,
    cdnEgressGb: (forecastBytes - forecastOffloaded) / 1e9,
    cost: costOf(forecastOffloaded, rates, platform.billing.defaultCdnPricePerGb),
  };
}

/** The forecast method applied to the pilot itself, against what it really delivered. */
function forecastCrossCheck(input: PilotInput, bitrateBps: number, delivered: number): Report['eventEconomics']['crossCheck'] {
  const c = input.figures.concurrency;
  const tolerance = input.platform.pilot.forecastTolerance;
  const averageConcurrency = c && c.minutes > 0 ? c.sessionMinutes / c.minutes : 0;
  const pilotSeconds = (c?.minutes ?? 0) * CONCURRENCY_BUCKET_SECONDS;
  const crossForecast = averageConcurrency * (bitrateBps / 8) * pilotSeconds;
  const crossRatio = delivered > 0 ? crossForecast / delivered : null;
  return {
    averageConcurrency,
    durationHours: pilotSeconds / 3600,
    forecastDeliveredGb: crossForecast / 1e9,
    actualDeliveredGb: delivered / 1e9,
    ratio: crossRatio,
    tolerance,
    flagged: crossRatio === null || Math.abs(crossRatio - 1) > tolerance,
  };
}
