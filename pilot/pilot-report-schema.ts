// The pilot report's shape (docs/api.md, "Pilot report JSON"), the one definition: the
// model's types come from it (z.infer), and pilot-report.schema.json and the OpenAPI document are
// generated from it (npm run schemas; test/pilot/report-schema.test.ts keeps the file in step).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { count, fraction, isoInstant, nonNegative, toJsonSchema } from '../lib/json-schema.ts';
import { CostSchema } from '../billing/cost-rules.ts';
import { BucketSchema } from '../warehouse/figures/index.ts';
import { PROJECT_ROOT } from '../lib/version.ts';

export const REPORT_VERSION = 1;

const share = fraction;
const nullable = <T extends z.ZodType>(t: T) => t.nullable();

const WindowFiguresSchema = z.object({
  start: isoInstant(),
  end: isoInstant(),
  bytesOffloaded: count(),
  bytesFallback: count(),
  offloadRatio: fraction(),
});

export const SteadyStateSchema = z.object({
  offloadRatio: fraction().describe('byte-weighted over the buckets between the first and the last (over all when fewer than three)'),
  coldStart: nullable(WindowFiguresSchema),
  final: nullable(WindowFiguresSchema),
  buckets: count().describe("buckets from the first report's to the last's"),
  steadyBuckets: count(),
});

/** What the whole stream and each cohort report besides sessions, bytes and offload. */
const playback = {
  rebufferEvents: count(),
  rebufferRatio: fraction(),
  startupP95Ms: nullable(nonNegative()),
  avgPeerCount: nonNegative(),
  avgBufferHealth: nonNegative(),
  p2pConnectionSuccess: nullable(fraction()),
  signalingErrors: count(),
};

export const CohortResultSchema = z
  .object({
    sessions: count(),
    bytesOffloaded: count(),
    bytesFallback: count(),
    offloadRatio: fraction(),
    steadyStateOffloadRatio: fraction(),
    ...playback,
  })
  .meta({ id: 'Cohort' });

export const CriterionSchema = z.object({
  id: z.string(),
  description: z.string(),
  threshold: z.number(),
  actual: z.number().nullable(),
  passed: z.boolean(),
});

export const ConclusionSchema = z.object({
  assessment: z.enum(['pass', 'review']),
  criteria: z.array(CriterionSchema).min(6),
  risks: z.array(z.string()),
  requiredFixes: z.array(z.string()),
  operator: z.object({ approvedPublicClaims: z.null(), finalSignOff: z.null() }).describe('operator-judgement lines, left blank for a human'),
});

const versionShare = z.object({ version: z.string(), sessions: count(), share: share() });

export const PilotReportSchema = z
  .object({
    reportVersion: z.literal(REPORT_VERSION),
    streamId: z.string().regex(/^[a-z0-9_-]{1,64}:[A-Za-z0-9._~-]{1,128}$/),
    customerId: z.string().regex(/^[a-z0-9_-]{1,64}$/),
    tenant: z.object({ id: z.string(), name: z.string() }).nullable(),
    snapshot: z.object({ id: z.string(), asOf: isoInstant() }).describe('the snapshot the report was computed from: a report is a function of it'),
    bucketSeconds: z.int().min(60).max(21_600),
    metadata: z.object({
      dateRange: z.object({ from: isoInstant(), to: isoInstant(), hours: nonNegative() }),
      streamsTested: z.array(z.string()).min(1),
      sessions: count(),
      viewers: z.object({ count: count(), sessionsWithoutViewerId: count() }),
      deviceMix: z.array(z.object({ device: z.string(), sessions: count(), share: share() })),
      regions: z.array(z.object({ region: z.string(), sessions: count(), share: share() })),
      signalingDeployment: z.object({ regions: z.array(z.string()), instancesPerRegion: count(), transport: z.string() }),
    }),
    configuration: z.object({
      sdkVersions: z.array(versionShare),
      signalingVersions: z.array(versionShare),
      remoteConfigPolicy: z.string(),
      uploadCapsKbps: z.record(z.string(), count()),
      authMode: z.string(),
      telemetryRetentionDays: count(),
      dataRegion: z.string(),
    }),
    results: z.object({
      sessions: count(),
      bytesOffloaded: count(),
      bytesFallback: count(),
      bytesDelivered: count(),
      offloadRatio: fraction(),
      steadyState: SteadyStateSchema,
      ...playback,
      cohorts: z.object({ p2p: CohortResultSchema.nullable(), control: CohortResultSchema.nullable() }),
      controlDeltas: z
        .object({ offloadRatio: z.number(), rebufferRatio: z.number(), startupP95Ms: z.number().nullable(), avgBufferHealth: z.number() })
        .nullable()
        .describe('peer-assisted minus control, when a control ran'),
      series: z.array(BucketSchema),
    }),
    routing: z.object({
      fallbackReasons: z.array(z.object({ reason: z.string(), segments: count(), share: share() })),
      deliveryModes: z.array(z.object({ mode: z.string(), reports: count(), sessions: count(), bytes: count(), share: share() })),
      paths: z.array(z.object({ path: z.string(), bytes: count(), share: share() })),
      validationFailures: count(),
      busyPeerEvents: count(),
    }),
    cost: CostSchema,
    eventEconomics: z.object({
      peakConcurrency: z.object({ sessions: count(), at: isoInstant().nullable(), bucketSeconds: count() }),
      averageDeliveredBitrateKbps: nonNegative(),
      forecast: z.object({
        durationHours: nonNegative(),
        concurrentViewers: count(),
        deliveredGb: nonNegative(),
        offloadRatio: fraction(),
        offloadedGb: nonNegative(),
        cdnEgressGb: nonNegative(),
        cost: CostSchema,
      }),
      crossCheck: z.object({
        averageConcurrency: nonNegative(),
        durationHours: nonNegative(),
        forecastDeliveredGb: nonNegative(),
        actualDeliveredGb: nonNegative(),
        ratio: nonNegative().nullable(),
        tolerance: nonNegative(),
        flagged: z.boolean(),
      }),
    }),
    conclusion: ConclusionSchema,
  })
  .meta({
    id: 'PilotReport',
    title: 'Pilot report',
    description:
      "The JSON form of GET /control/reports/pilot/:streamId (format=json). The cost and conclusion objects are fixed by docs/api.md; the other field names are the project's.",
  });

export type PilotReport = z.infer<typeof PilotReportSchema>;
export type SteadyState = z.infer<typeof SteadyStateSchema>;
export type WindowFigures = z.infer<typeof WindowFiguresSchema>;
export type CohortResult = z.infer<typeof CohortResultSchema>;
export type Criterion = z.infer<typeof CriterionSchema>;
export type Conclusion = z.infer<typeof ConclusionSchema>;

/** Where the generated file lives (in the sources: compiled code is in dist/), and the `$id` it carries. */
export const PILOT_REPORT_SCHEMA_FILE = pathToFileURL(path.join(PROJECT_ROOT, 'pilot', 'pilot-report.schema.json'));
const PILOT_REPORT_SCHEMA_ID = 'https://p2ptel.invalid/schemas/pilot-report.schema.json';

/** The standalone JSON Schema document (2020-12) of a pilot report, as committed. */
export function pilotReportJsonSchema(): Record<string, unknown> {
  const { $schema, $ref: _self, $defs, ...rest } = toJsonSchema(PilotReportSchema) as { $defs: Record<string, Record<string, unknown>> } & Record<string, unknown>;
  // The report has an id (it is a component of the OpenAPI document): here it is the root itself.
  const { PilotReport: root, ...defs } = $defs;
  const { title, description, ...body } = root!;
  return { $schema, $id: PILOT_REPORT_SCHEMA_ID, title, description, ...rest, ...body, $defs: defs };
}

/** The file's text, as `npm run schemas` writes it. */
export function pilotReportSchemaText(): string {
  return `${JSON.stringify(pilotReportJsonSchema(), null, 2)}\n`;
}
