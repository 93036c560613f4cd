// The pilot report model on its own, with purpose-built figures: the cost rules by hand, every
// criterion passing and failing, steady state against cold start on a hand-worked series, risks,
// and the JSON Schema.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { costOf } from '../../billing/cost-rules.ts';
import { composePilotReport, steadyStateOf, type PilotReport } from '../../pilot/model.ts';
import type { CohortFigures, StreamPilotFigures } from '../../pilot/figures.ts';
import type { BucketRow } from '../../warehouse/figures/bucket-series.ts';
import { loadPlatformConfig } from '../../config/platform.ts';
import { PROJECT_ROOT } from '../../lib/version.ts';

const platform = loadPlatformConfig();
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = new Ajv2020({ allErrors: true });
addFormats(ajv);
const validateSchema = ajv.compile(JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'pilot/pilot-report.schema.json'), 'utf8')));

function expectValidReport(report: PilotReport): void {
  const ok = validateSchema(report);
  expect(ok, JSON.stringify(validateSchema.errors)).toBe(true);
}

const T0 = Date.parse('2026-11-20T10:00:00Z');
const bucket = (i: number, off: number, fb: number, sessions = 10, size = 600): BucketRow => ({
  startMs: T0 + i * size * 1000,
  sessions,
  bytesOffloaded: off,
  bytesFallback: fb,
  offloadRatio: off + fb > 0 ? off / (off + fb) : 0,
  avgPeerCount: 3,
  avgBufferHealth: 10,
  rebufferEvents: 0,
});

function cohort(over: Partial<CohortFigures> = {}): CohortFigures {
  return {
    sessions: 300,
    reports: 9000,
    viewers: 250,
    sessionsWithoutViewer: 10,
    bytesOffloaded: 600e9,
    bytesFallback: 400e9,
    offloadRatio: 0.6,
    avgPeerCount: 5,
    avgBufferHealth: 12,
    rebufferEvents: 30,
    stallMs: 10_000,
    watchMs: 10_000_000,
    rebufferRatio: 0.001,
    startupP95Ms: 1000,
    startupSamples: 300,
    p2pConnAttempts: 1000,
    p2pConnSuccesses: 900,
    p2pConnectionSuccess: 0.9,
    signalingErrors: 3,
    validationFailures: 0,
    busyPeerEvents: 5,
    intervalMs: 3_600_000,
    firstReportAt: new Date(T0),
    lastReportAt: new Date(T0 + 3_600_000),
    ...over,
  };
}

/** A healthy pilot: every default criterion passes. */
function figures(over: Partial<StreamPilotFigures> = {}): StreamPilotFigures {
  const series = [bucket(0, 10, 90), bucket(1, 60, 40), bucket(2, 70, 30), bucket(3, 80, 20), bucket(4, 5, 5)];
  const sessions = over.all?.sessions ?? 330;
  const desktop = Math.round(sessions * 0.6);
  return {
    streamId: 'acme:live-main',
    all: cohort({ sessions, bytesFallback: 450e9, offloadRatio: 600 / 1050 }),
    p2p: cohort(),
    control: cohort({ sessions: 30, bytesOffloaded: 0, bytesFallback: 50e9, offloadRatio: 0, rebufferRatio: 0.001, startupP95Ms: 900, p2pConnAttempts: 0, p2pConnSuccesses: 0, p2pConnectionSuccess: null }),
    breakdowns: [
      { kind: 'device', key: 'desktop', sessions: desktop, reports: 5000, amount: null },
      { kind: 'device', key: 'mobile', sessions: sessions - desktop, reports: 4000, amount: null },
      { kind: 'fallbackReason', key: 'no_peers', sessions: null, reports: null, amount: 30 },
      { kind: 'fallbackReason', key: 'peer_timeout', sessions: null, reports: null, amount: 70 },
      { kind: 'path', key: 'webrtc', sessions: null, reports: null, amount: 600e9 },
      { kind: 'path', key: 'http', sessions: null, reports: null, amount: 450e9 },
    ],
    series,
    p2pSeries: series,
    controlSeries: [bucket(0, 0, 10), bucket(4, 0, 10)],
    // Minutes 0, 1 and 3 with 12, 20 and 4 sessions (minute 2 empty): four minutes, 36 session-minutes.
    concurrency: { peakSessions: 20, peakStartMs: Date.parse('2026-11-20T10:01:00.000Z'), sessionMinutes: 36, minutes: 4 },
    ...over,
  };
}

const tenant = { id: 't_01AAAAAAAAAAAAAAAAAAAAAAAA', name: 'Acme', cdnPricePerGb: 0.035, savingsSharePct: 20 };

function compose(f: StreamPilotFigures, t: typeof tenant | null = tenant): PilotReport {
  const report = composePilotReport({ streamId: f.streamId, snapshot: { id: 's', asOf: '2026-11-20T12:00:00.000Z' }, bucketSeconds: 600, figures: f, tenant: t, platform });
  expectValidReport(report);
  return report;
}

const criterion = (r: PilotReport, id: string) => r.conclusion.criteria.find((c) => c.id === id)!;

describe('cost rules', () => {
  it('a tenant with rate 0.035 and share 20 %', () => {
    expect(costOf(1_234_500_000_000, { cdnPricePerGb: 0.035, savingsSharePct: 20 }, 0.02)).toEqual({
      currency: 'USD',
      offloadedGb: 1234.5,
      cdnPricePerGb: 0.035,
      assumedRate: false,
      avoidedCdnCost: 43.2075, // 1234.5 × 0.035
      savingsSharePct: 20,
      fee: 8.6415, // 20 % of it
      netSavings: 34.566,
    });
  });

  it('no offload gives a zero fee', () => {
    expect(costOf(0, { cdnPricePerGb: 0.035, savingsSharePct: 20 }, 0.02)).toMatchObject({ offloadedGb: 0, avoidedCdnCost: 0, fee: 0, netSavings: 0 });
  });

  it('no rate on file: the platform default, flagged as assumed', () => {
    expect(costOf(500e9, { cdnPricePerGb: null, savingsSharePct: 25 }, 0.02)).toMatchObject({
      cdnPricePerGb: 0.02,
      assumedRate: true,
      avoidedCdnCost: 10,
      fee: 2.5,
      netSavings: 7.5,
    });
  });

  it('rounds once, to the micro-dollar, so that net = avoided − fee', () => {
    const c = costOf(123_456_789_123, { cdnPricePerGb: 0.0173, savingsSharePct: 33.3 }, 0.02);
    expect(c.avoidedCdnCost).toBe(2.135802); // 123.456789123 × 0.0173 = 2.13580245...
    expect(c.fee).toBe(0.711222); // 33.3 % of 2.135802 = 0.71122207
    expect(Math.round((c.avoidedCdnCost - c.fee) * 1e6)).toBe(Math.round(c.netSavings * 1e6));
  });

  it('the report carries the tenant rates into its cost object, and the assumed-rate risk when it has none', () => {
    const r = compose(figures());
    expect(r.cost).toEqual(costOf(600e9, { cdnPricePerGb: 0.035, savingsSharePct: 20 }, 0.02));
    expect(r.cost.avoidedCdnCost).toBe(21);
    expect(r.conclusion.risks.join(' ')).not.toMatch(/assume/);
    const assumed = compose(figures(), null);
    expect(assumed.cost).toMatchObject({ assumedRate: true, cdnPricePerGb: 0.02, savingsSharePct: 25, avoidedCdnCost: 12, fee: 3, netSavings: 9 });
    expect(assumed.conclusion.risks.join(' ')).toMatch(/No CDN rate is on file/);
  });
});

describe('steady state', () => {
  it('leaves out the cold-start and the final bucket, byte-weighted between them', () => {
    // Buckets: (10, 90) cold start, (60, 40), (0, 0) empty, (80, 20), (5, 5) final.
    const s = steadyStateOf([bucket(0, 10, 90), bucket(1, 60, 40), bucket(3, 80, 20), bucket(4, 5, 5)], 600);
    expect(s.buckets).toBe(5);
    expect(s.steadyBuckets).toBe(3);
    expect(s.offloadRatio).toBeCloseTo((60 + 80) / (60 + 40 + 80 + 20), 12); // 0.7, against 155/310 = 0.5 overall
    expect(s.coldStart).toEqual({ start: '2026-11-20T10:00:00.000Z', end: '2026-11-20T10:10:00.000Z', bytesOffloaded: 10, bytesFallback: 90, offloadRatio: 0.1 });
    expect(s.final).toMatchObject({ start: '2026-11-20T10:40:00.000Z', offloadRatio: 0.5 });
  });

  it('uses every bucket when there are fewer than three', () => {
    expect(steadyStateOf([bucket(0, 10, 90), bucket(1, 60, 40)], 600)).toMatchObject({ offloadRatio: 70 / 200, buckets: 2, steadyBuckets: 2 });
    expect(steadyStateOf([bucket(0, 30, 10)], 600)).toMatchObject({ offloadRatio: 0.75, buckets: 1 });
    expect(steadyStateOf([], 600)).toEqual({ offloadRatio: 0, coldStart: null, final: null, buckets: 0, steadyBuckets: 0 });
  });

  it('drives the steady-state criterion from the peer-assisted cohort', () => {
    const r = compose(figures());
    expect(r.results.cohorts.p2p!.steadyStateOffloadRatio).toBeCloseTo((60 + 70 + 80) / (60 + 40 + 70 + 30 + 80 + 20), 12);
    expect(criterion(r, 'steady_state_offload')).toMatchObject({ passed: true, threshold: 0.5 });
    const cold = [bucket(0, 90, 10), bucket(1, 20, 80), bucket(2, 30, 70), bucket(3, 95, 5)];
    const low = compose(figures({ p2pSeries: cold }));
    expect(criterion(low, 'steady_state_offload')).toMatchObject({ passed: false, actual: 0.25 });
  });
});

describe('criteria', () => {
  it('a healthy pilot passes every default criterion', () => {
    const r = compose(figures());
    expect(r.conclusion.criteria.map((c) => [c.id, c.passed])).toEqual([
      ['min_sessions', true],
      ['steady_state_offload', true],
      ['p2p_connection_success', true],
      ['validation_failures', true],
      ['rebuffer_ratio', true],
      ['startup_p95', true],
    ]);
    expect(r.conclusion.assessment).toBe('pass');
    expect(r.conclusion.requiredFixes).toEqual([]);
    expect(r.conclusion.operator).toEqual({ approvedPublicClaims: null, finalSignOff: null });
  });

  const failing: [string, Partial<StreamPilotFigures>, number | null][] = [
    ['min_sessions', { all: cohort({ sessions: 99 }) }, 99],
    ['p2p_connection_success', { p2p: cohort({ p2pConnectionSuccess: 0.79 }) }, 0.79],
    ['validation_failures', { all: cohort({ validationFailures: 1 }) }, 1],
    // Control at 0.001: the threshold is 0.0011.
    ['rebuffer_ratio', { p2p: cohort({ rebufferRatio: 0.00111 }) }, 0.00111],
    // Control p95 at 900 ms: the threshold is 1150 ms.
    ['startup_p95', { p2p: cohort({ startupP95Ms: 1151 }) }, 1151],
    ['startup_p95', { p2p: cohort({ startupP95Ms: null, startupSamples: 0 }) }, null],
  ];
  for (const [id, over, actual] of failing) {
    it(`${id} fails on purpose, and is named among the required fixes`, () => {
      const r = compose(figures(over));
      expect(criterion(r, id)).toMatchObject({ passed: false, actual });
      expect(r.conclusion.criteria.filter((c) => !c.passed).map((c) => c.id)).toEqual([id]);
      expect(r.conclusion.assessment).toBe('review');
      expect(r.conclusion.requiredFixes).toHaveLength(1);
      expect(r.conclusion.requiredFixes[0]).toMatch(new RegExp(`^${id}: `));
    });
  }

  it('passes exactly at the thresholds', () => {
    const r = compose(figures({ all: cohort({ sessions: 100 }), p2p: cohort({ p2pConnectionSuccess: 0.8, rebufferRatio: 0.0011, startupP95Ms: 1150 }) }));
    expect(r.conclusion.criteria.every((c) => c.passed)).toBe(true);
    expect(criterion(r, 'rebuffer_ratio').threshold).toBeCloseTo(0.0011, 15);
    expect(criterion(r, 'startup_p95').threshold).toBe(1150);
  });

  it('without a control cohort: absolute thresholds, and the missing control is a risk', () => {
    const r = compose(figures({ control: null, controlSeries: [], p2p: cohort({ rebufferRatio: 0.02, startupP95Ms: 2500 }) }));
    expect(criterion(r, 'rebuffer_ratio')).toMatchObject({ threshold: 0.01, actual: 0.02, passed: false });
    expect(criterion(r, 'startup_p95')).toMatchObject({ threshold: 3000, actual: 2500, passed: true });
    expect(r.results.cohorts.control).toBeNull();
    expect(r.results.controlDeltas).toBeNull();
    expect(r.conclusion.risks[0]).toMatch(/No CDN-only control cohort ran/);
  });

  it('with a control cohort: deltas of the peer-assisted cohort against it', () => {
    const r = compose(figures());
    expect(r.results.controlDeltas).toEqual({ offloadRatio: 0.6, rebufferRatio: 0, startupP95Ms: 100, avgBufferHealth: 0 });
  });

  it('names small samples, high signaling error rates and validation failures as risks', () => {
    const r = compose(figures({ all: cohort({ sessions: 120, signalingErrors: 30, validationFailures: 2 }) }));
    const risks = r.conclusion.risks.join('\n');
    expect(risks).toMatch(/Small sample: 120 sessions/);
    expect(risks).toMatch(/High signaling errors: 0.25 per session/);
    expect(risks).toMatch(/2 peer segments failed/);
  });
});

describe('event economics', () => {
  it('forecasts an event at the peak with the delivered bitrate, and cross-checks the method on the pilot', () => {
    const r = compose(figures());
    const e = r.eventEconomics;
    // Peak: the busiest minute (20 sessions, at 10:01).
    expect(e.peakConcurrency).toEqual({ sessions: 20, at: '2026-11-20T10:01:00.000Z', bucketSeconds: 60 });
    // Bitrate: 8 × 1050e9 bytes over 3600 s of reports.
    const bps = (8 * 1050e9) / 3600;
    expect(e.averageDeliveredBitrateKbps).toBeCloseTo(bps / 1000, 9);
    const delivered = 20 * (bps / 8) * 2 * 3600;
    expect(e.forecast.deliveredGb).toBeCloseTo(delivered / 1e9, 9);
    expect(e.forecast.offloadedGb).toBeCloseTo((delivered * e.forecast.offloadRatio) / 1e9, 9);
    expect(e.forecast.cdnEgressGb).toBeCloseTo(e.forecast.deliveredGb - e.forecast.offloadedGb, 9);
    expect(e.forecast.cost).toEqual(costOf(delivered * e.forecast.offloadRatio, { cdnPricePerGb: 0.035, savingsSharePct: 20 }, 0.02));
    // Cross-check: minutes 10:00 to 10:03 (12, 20, 0, 4 sessions) → 9 on average over 240 s,
    // against 3600 s of reports: the method finds 9 × 240 / 3600 = 0.6 of what was delivered.
    expect(e.crossCheck.averageConcurrency).toBe(9);
    expect(e.crossCheck.durationHours).toBeCloseTo(240 / 3600, 12);
    expect(e.crossCheck.forecastDeliveredGb).toBeCloseTo((9 * (bps / 8) * 240) / 1e9, 9);
    expect(e.crossCheck.ratio).toBeCloseTo(0.6, 12);
    expect(e.crossCheck.flagged).toBe(true);
    expect(r.conclusion.risks.join(' ')).toMatch(/forecast method is off by more than 20 %/);
  });
});
