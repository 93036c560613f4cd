// Every figure of the pilot reports, on generated data, against an independent computation in
// plain SQL over the raw files (test/helpers/independent.ts), and every composed report against the
// JSON Schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { TestWarehouse } from '../helpers/warehouse.ts';
import { AS_OF, historyWarehouse } from '../helpers/api.ts';
import { expectSameFigure, Independent, norm, type Row } from '../helpers/independent.ts';
import { currentSnapshot, type LoadedSnapshot } from '../../warehouse/snapshots/snapshot-read.ts';
import { composeCustomerReports } from '../../pilot/service.ts';
import type { PilotReport } from '../../pilot/model.ts';
import { loadPlatformConfig } from '../../config/platform.ts';
import { addTenant } from '../../control/tenants.ts';
import { costOf } from '../../billing/cost-rules.ts';
import { PROJECT_ROOT } from '../../lib/version.ts';

const platform = loadPlatformConfig();

let wh: TestWarehouse;
let snap: LoadedSnapshot;
let ind: Independent;
const reports = new Map<string, PilotReport>();

beforeAll(async () => {
  // The generated history rolled up at AS_OF, as the API tests have it (built once a test run).
  wh = await historyWarehouse();
  snap = (await currentSnapshot(wh.layout))!;
  ind = await Independent.create(wh.db, wh.layout.rawReports, AS_OF);
  await addTenant(wh.layout, { customerId: 'acme', name: 'Acme', cdnPricePerGb: 0.035, savingsSharePct: 20 });
  for (const customerId of ['acme', 'globex']) {
    const { reports: list } = await composeCustomerReports({ db: wh.db, layout: wh.layout, platform }, { id: snap.manifest.snapshot, manifest: snap.manifest }, customerId, 600, null);
    for (const r of list) reports.set(r.streamId, r);
  }
}, 240_000);

afterAll(async () => {
  await wh?.close();
});

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The independent figures of a stream, per cohort ('all' for the whole stream). */
async function independentCohort(streamId: string, cohort: 'all' | 'p2p' | 'control'): Promise<Row | undefined> {
  const [row] = await ind.query(
    `WITH r AS (SELECT * FROM ind_reports WHERE streamId = $stream AND ($cohort = 'all' OR coalesce(cohort, 'p2p') = $cohort)),
          per_session AS (SELECT sessionId, avg(peerCount) AS m, max(startupMs) AS startup FROM r GROUP BY sessionId)
     SELECT count(DISTINCT sessionId) AS sessions,
            count(DISTINCT viewerId) + count(DISTINCT sessionId) FILTER (WHERE viewerId IS NULL) AS viewers,
            sum(bytesOffloaded) AS bytesOffloaded, sum(bytesFallback) AS bytesFallback,
            sum(stallCount) AS rebufferEvents,
            sum(stallMs) / (sum(watchMs) + sum(stallMs)) AS rebufferRatio,
            (SELECT quantile_cont(startup, 0.95) FROM per_session) AS startupP95Ms,
            (SELECT avg(m) FROM per_session) AS avgPeerCount,
            avg(bufferHealth) AS avgBufferHealth,
            sum(p2pConnSuccesses) / nullif(sum(p2pConnAttempts), 0) AS p2pConnectionSuccess,
            sum(signalingErrors) AS signalingErrors
     FROM r HAVING count(*) > 0`,
    { stream: streamId, cohort },
  );
  return row;
}

const SAMPLE = ['acme:live-main', 'acme:vod-library', 'acme:live-sports', 'globex:live-main'];

describe('pilot figures equal an independent computation', () => {
  it('composes a schema-valid report for every stream that reported', async () => {
    const ajv = new Ajv2020({ allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'pilot/pilot-report.schema.json'), 'utf8')));
    const streams = (await ind.query(`SELECT DISTINCT streamId FROM ind_reports ORDER BY 1`)).map((r) => r['streamId']);
    expect([...reports.keys()].sort()).toEqual(streams);
    for (const r of reports.values()) expect(validate(r), `${r.streamId}: ${JSON.stringify(validate.errors)}`).toBe(true);
  });

  for (const streamId of SAMPLE) {
    it(`${streamId}: results of the stream and of each cohort`, async () => {
      const r = reports.get(streamId)!;
      const all = (await independentCohort(streamId, 'all'))!;
      for (const k of ['sessions', 'bytesOffloaded', 'bytesFallback', 'rebufferEvents', 'rebufferRatio', 'startupP95Ms', 'avgPeerCount', 'avgBufferHealth', 'p2pConnectionSuccess', 'signalingErrors']) {
        expectSameFigure((r.results as unknown as Row)[k], all[k], `${streamId} ${k}`);
      }
      expectSameFigure(r.metadata.viewers.count, all['viewers'], 'viewers');
      for (const cohort of ['p2p', 'control'] as const) {
        const theirs = await independentCohort(streamId, cohort);
        const ours = r.results.cohorts[cohort];
        if (!theirs) {
          expect(ours, cohort).toBeNull();
          continue;
        }
        for (const k of ['sessions', 'bytesOffloaded', 'bytesFallback', 'rebufferEvents', 'rebufferRatio', 'startupP95Ms', 'avgPeerCount', 'avgBufferHealth', 'p2pConnectionSuccess', 'signalingErrors']) {
          expectSameFigure((ours as unknown as Row)[k], theirs[k], `${streamId} ${cohort} ${k}`);
        }
      }
      expect(r.results.cohorts.control?.bytesOffloaded ?? 0).toBe(0);
    });

    it(`${streamId}: metadata, routing breakdown and cost`, async () => {
      const r = reports.get(streamId)!;
      const [range] = await ind.query(`SELECT min(ts) AS f, max(ts) AS t FROM ind_reports WHERE streamId = $s`, { s: streamId });
      expect(r.metadata.dateRange.from).toBe(norm(range!['f']));
      expect(r.metadata.dateRange.to).toBe(norm(range!['t']));
      const devices = await ind.query(`SELECT device, count(DISTINCT sessionId) AS n FROM ind_reports WHERE streamId = $s GROUP BY 1 ORDER BY n DESC, device`, { s: streamId });
      expect(r.metadata.deviceMix.map((d) => [d.device, d.sessions])).toEqual(devices.map((d) => [d['device'], norm(d['n'])]));
      const sdk = await ind.query(`SELECT sdkVersion, count(DISTINCT sessionId) AS n FROM ind_reports WHERE streamId = $s GROUP BY 1 ORDER BY n DESC, sdkVersion`, { s: streamId });
      expect(r.configuration.sdkVersions.map((d) => [d.version, d.sessions])).toEqual(sdk.map((d) => [d['sdkVersion'], norm(d['n'])]));
      const reasons = await ind.query(
        `SELECT k, sum(v) AS n FROM (SELECT unnest(map_keys(fallbackReasons)) AS k, unnest(map_values(fallbackReasons)) AS v FROM ind_reports WHERE streamId = $s) GROUP BY k ORDER BY n DESC, k`,
        { s: streamId },
      );
      expect(r.routing.fallbackReasons.map((x) => [x.reason, x.segments])).toEqual(reasons.map((x) => [x['k'], norm(x['n'])]));
      const paths = await ind.query(
        `SELECT k, sum(v) AS n FROM (SELECT unnest(map_keys(bytesByPath)) AS k, unnest(map_values(bytesByPath)) AS v FROM ind_reports WHERE streamId = $s) GROUP BY k ORDER BY n DESC, k`,
        { s: streamId },
      );
      expect(r.routing.paths.map((x) => [x.path, x.bytes])).toEqual(paths.map((x) => [x['k'], norm(x['n'])]));
      const [counts] = await ind.query(`SELECT sum(validationFailures) AS v, sum(busyPeerEvents) AS b FROM ind_reports WHERE streamId = $s`, { s: streamId });
      expect(r.routing.validationFailures).toBe(norm(counts!['v']));
      expect(r.routing.busyPeerEvents).toBe(norm(counts!['b']));
      const rates = streamId.startsWith('acme:') ? { cdnPricePerGb: 0.035, savingsSharePct: 20 } : { cdnPricePerGb: null, savingsSharePct: 25 };
      expect(r.cost).toEqual(costOf(r.results.bytesOffloaded, rates, 0.02));
      expect(r.cost.assumedRate).toBe(streamId.startsWith('globex:'));
    });

    it(`${streamId}: the report series, steady state and peak concurrency`, async () => {
      const r = reports.get(streamId)!;
      const series = await ind.series(600, streamId);
      const nonEmpty = r.results.series.filter((b) => b.sessions > 0);
      expect(nonEmpty.length).toBe(series.length);
      nonEmpty.forEach((b, i) => {
        expect(Date.parse(b.start)).toBe(norm(series[i]!['start']));
        for (const k of ['sessions', 'bytesOffloaded', 'bytesFallback', 'offloadRatio', 'avgPeerCount', 'avgBufferHealth', 'rebufferEvents']) {
          expectSameFigure((b as unknown as Row)[k], series[i]![k], `${streamId} bucket ${i} ${k}`);
        }
      });
      // Steady state of the peer-assisted cohort, from its own independent series.
      const p2p = await ind.query(
        `SELECT floor(epoch(ts) / 600) AS b, sum(bytesOffloaded) AS off, sum(bytesFallback) AS fb
         FROM ind_reports WHERE streamId = $s AND coalesce(cohort, 'p2p') = 'p2p' GROUP BY 1 ORDER BY 1`,
        { s: streamId },
      );
      const first = Number(p2p[0]!['b']);
      const last = Number(p2p[p2p.length - 1]!['b']);
      const inner = last - first + 1 >= 3 ? p2p.filter((x) => Number(x['b']) !== first && Number(x['b']) !== last) : p2p;
      const off = inner.reduce((a, x) => a + Number(norm(x['off'])), 0);
      const fb = inner.reduce((a, x) => a + Number(norm(x['fb'])), 0);
      expect(r.results.cohorts.p2p!.steadyStateOffloadRatio).toBeCloseTo(off / (off + fb), 9);
      const [peak] = await ind.query(
        `SELECT count(DISTINCT sessionId) AS n, to_timestamp(floor(epoch(ts) / 60) * 60) AS minute FROM ind_reports WHERE streamId = $s
         GROUP BY floor(epoch(ts) / 60) ORDER BY n DESC, minute LIMIT 1`,
        { s: streamId },
      );
      expect(r.eventEconomics.peakConcurrency.sessions).toBe(norm(peak!['n']));
      expect(r.eventEconomics.peakConcurrency.at).toBe(norm(peak!['minute']));
      // Average concurrency: distinct sessions per minute, summed, over every minute from the first
      // minute with a report to the last (the empty ones between them count as 0).
      const [avg] = await ind.query(
        `SELECT sum(n) AS total, max(m) - min(m) + 1 AS minutes FROM (
           SELECT floor(epoch(ts) / 60) AS m, count(DISTINCT sessionId) AS n FROM ind_reports WHERE streamId = $s GROUP BY 1)`,
        { s: streamId },
      );
      expect(r.eventEconomics.crossCheck.averageConcurrency).toBeCloseTo(Number(norm(avg!['total'])) / Number(norm(avg!['minutes'])), 12);
      expect(r.eventEconomics.crossCheck.durationHours).toBeCloseTo((Number(norm(avg!['minutes'])) * 60) / 3600, 12);
    });
  }
});
