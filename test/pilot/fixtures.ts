// Real pilot reports for the rendering tests: generated session reports (and a hand-made stream
// that delivered nothing) rolled up by the real pipeline, figures from the shared SQL, reports
// composed by the real model, each one validated against the report's JSON Schema.
import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { landingPath, writeReportsParquet, type HandReport } from '../helpers/reports.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { currentSnapshot } from '../../warehouse/snapshots/snapshot-read.ts';
import { loadPlatformConfig } from '../../config/platform.ts';
import { loadPilotFigures, type StreamPilotFigures } from '../../pilot/figures.ts';
import { composePilotReport, type PilotInput, type PilotReport } from '../../pilot/model.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const START = new Date('2026-11-20T06:00:00Z');
/** Five hours of data: 30 buckets of 10 min, 300 of 1 min, one of 6 h. */
export const AS_OF = new Date(START.getTime() + 5 * 3_600_000);
export const ZERO_STREAM = 'quiet:silent';
export const TENANTS: Record<string, NonNullable<PilotInput['tenant']>> = {
  acme: { id: 'tenant-acme', name: 'ACME Streaming', cdnPricePerGb: 0.035, savingsSharePct: 20 },
};

export interface PilotFixture {
  wh: TestWarehouse;
  snapshot: { id: string; asOf: string };
  /** Every stream's report at the default bucket size (600 s), by stream id. */
  reports: Map<string, PilotReport>;
  /** A generated stream whose control cohort ran, with a tenant and its rates. */
  withControl: PilotReport;
  /** The same stream's figures with the control cohort left out, and no tenant (assumed rate). */
  withoutControl: PilotReport;
  /** 6 h buckets: the whole pilot in one bucket. */
  oneBucket: PilotReport;
  /** 4 h buckets (aligned to 04:00, 08:00, 12:00): two buckets, so no cold-start/final split. */
  twoBuckets: PilotReport;
  /** 1 min buckets: 300 buckets, more than the chart draws as separate bars. */
  minuteBuckets: PilotReport;
  /** Reports with no bytes at all. */
  allZero: PilotReport;
  close(): Promise<void>;
}

/** A stream that reported for 40 minutes without receiving a byte (stalled player, say). */
function silentStream(): HandReport[] {
  const out: HandReport[] = [];
  for (let i = 0; i < 9; i++) {
    const ts = new Date(START.getTime() + 3_600_000 + i * 5 * 60_000).toISOString();
    out.push({ reportId: `silent-${i}`, sessionId: `silent-s${i % 3}`, streamId: ZERO_STREAM, ts, seq: Math.floor(i / 3), viewerId: `v${i % 3}`, startupMs: 900 + i });
  }
  return out;
}

export function schemaValidator(): (report: PilotReport) => void {
  const schema = JSON.parse(fs.readFileSync(new URL('../../pilot/pilot-report.schema.json', import.meta.url), 'utf8')) as object;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  return (report) => {
    const { streamId } = report;
    if (!validate(report)) throw new Error(`${streamId}: report does not match its JSON Schema: ${ajv.errorsText(validate.errors)}`);
  };
}

export async function buildPilotFixture(): Promise<PilotFixture> {
  const wh = await openTestWarehouse();
  try {
    await generateReports(wh.db, wh.layout, { customers: ['acme', 'globex'], streams: 2, sessions: 120, start: START, hours: 5, seed: 61 });
    await writeReportsParquet(wh.db, landingPath(wh.root, 'quiet', '2026-11-20', 'silent.parquet'), silentStream());
    await runPipeline(wh, { asOf: AS_OF });
    const snap = await currentSnapshot(wh.layout);
    if (!snap) throw new Error('the pipeline published no snapshot');
    const snapshot = { id: snap.manifest.snapshot, asOf: snap.manifest.asOf };
    const platform = loadPlatformConfig();
    const validate = schemaValidator();

    const figuresAt = async (bucketSeconds: number): Promise<Map<string, StreamPilotFigures>> => {
      const all = new Map<string, StreamPilotFigures>();
      for (const p of snap.manifest.partitions) {
        const inputs = { files: p.files.map((f) => path.join(wh.layout.rawReports, f.path)), presentColumns: p.presentColumns };
        const byStream = await wh.db.withSession((s) => loadPilotFigures(s, inputs, null, AS_OF, bucketSeconds));
        for (const [id, f] of byStream) all.set(id, f);
      }
      return all;
    };
    const compose = (figures: StreamPilotFigures, bucketSeconds: number, tenant: PilotInput['tenant'] | undefined = undefined): PilotReport => {
      const customerId = figures.streamId.slice(0, figures.streamId.indexOf(':'));
      const report = composePilotReport({
        streamId: figures.streamId,
        snapshot,
        bucketSeconds,
        figures,
        tenant: tenant === undefined ? (TENANTS[customerId] ?? null) : tenant,
        platform,
      });
      validate(report);
      return report;
    };

    const standard = await figuresAt(600);
    const reports = new Map([...standard].map(([id, f]) => [id, compose(f, 600)]));
    const withControlId = [...standard.values()].find((f) => f.streamId.startsWith('acme:') && f.control !== null && f.p2p !== null)?.streamId;
    if (!withControlId) throw new Error('the generated data has no acme stream with a control cohort');
    const base = standard.get(withControlId)!;
    const one = await figuresAt(21_600);
    const two = await figuresAt(14_400);
    const minute = await figuresAt(60);
    return {
      wh,
      snapshot,
      reports,
      withControl: reports.get(withControlId)!,
      withoutControl: compose({ ...base, control: null, controlSeries: [] }, 600, null),
      oneBucket: compose(one.get(withControlId)!, 21_600),
      twoBuckets: compose(two.get(withControlId)!, 14_400),
      minuteBuckets: compose(minute.get(withControlId)!, 60),
      allZero: reports.get(ZERO_STREAM)!,
      close: () => wh.close(),
    };
  } catch (err) {
    await wh.close();
    throw err;
  }
}
