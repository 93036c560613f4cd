// Requests and responses of the telemetry routes (docs/api.md "Telemetry").
import { z } from 'zod';
import { count, fraction, isoInstant, nonNegative } from '../../lib/json-schema.ts';
import { BucketSchema, QualityBucketSchema } from '../../warehouse/figures/index.ts';
import { MAX_BUCKET_SECONDS, MIN_BUCKET_SECONDS, SERVED_WINDOW_NAMES, WINDOW_NAMES, type ServedWindow, type WindowName } from '../../warehouse/figures/index.ts';
import { EXPORT_FORMATS } from '../export/export.ts';
import { BREAKDOWN_DIMENSIONS, type SessionDimension } from '../../warehouse/reads/index.ts';
import { MAX_FILTER_CHARS, MAX_FILTERS } from '../../served/breakdown-filters.ts';
import { MAX_BUCKETS } from '../timeseries.ts';
import { bucketSecondsParam, detailParam, enumParam, optionalText, servedWindowParam, windowParam } from './params.ts';

const streamIdQuery = optionalText().describe("One of the caller's streams (required: without it the request is refused with 403)");

export const StreamsQuery = z.object({ window: windowParam, detail: detailParam });
export const PlatformMetricsQuery = z.object({ window: windowParam, groupBy: z.enum(['customer']).optional() });
/** `period=previous`: the figures of the period of the window's length that ends where the window starts. */
export const periodParam = z
  .enum(['current', 'previous'])
  .default('current')
  .describe(
    'previous: the figures of the period of the same length that ends where the window starts, (asOf − 2·window, asOf − window], computed on demand with the same definitions (filters apply the same way); not for window=all (400 no_previous_period)',
  );
export const StreamMetricsQuery = z.object({ window: servedWindowParam, period: periodParam });
export const TimeseriesQuery = z.object({
  streamId: streamIdQuery,
  bucketSeconds: bucketSecondsParam().describe(
    `Seconds per bucket; ${MIN_BUCKET_SECONDS}–${MAX_BUCKET_SECONDS}. 60, 300, 600, 3600, 21600 and 86400 are precomputed; others are computed on demand.`,
  ),
  window: windowParam,
  quality: z
    .enum(['1', 'true', '0', 'false'])
    .default('0')
    .transform((v) => v === '1' || v === 'true')
    .describe(
      "1 or true: each bucket also has its quality figures (watchMs, stallMs, rebufferRatio, startupTimeP95Ms, p2pConnectionSuccess), computed on demand from the stream's reports (any bucketSeconds) and cached for the snapshot",
    ),
});
export const ExportQuery = z.object({ streamId: streamIdQuery, window: windowParam, format: enumParam(EXPORT_FORMATS, 'csv') });
/** Checked before the rest of the query, so that a foreign or missing stream is a 403 whatever else is wrong. */
export const StreamIdQuery = z.object({ streamId: streamIdQuery });

const windowName = z.enum(WINDOW_NAMES as [WindowName, ...WindowName[]]);
/** The window of an answer computed on demand (stream metrics, breakdown): short ones too. */
const servedWindowName = z.enum(SERVED_WINDOW_NAMES as [ServedWindow, ...ServedWindow[]]);

const figures = {
  totalSessions: count().describe('distinct sessions with a report in the window'),
  totalBytesOffloaded: count().describe('bytes delivered by peers'),
  totalBytesFallback: count().describe('bytes delivered by the CDN'),
  avgOffloadRatio: fraction().describe('peer bytes / all bytes, byte-weighted; 0 when nothing was delivered'),
  avgPeerCount: nonNegative().describe("mean over sessions of each session's mean peer count"),
  avgBufferHealth: nonNegative().describe('mean buffer health over reports, seconds'),
};
const liveness = {
  activePeers: count().describe('sessions whose latest report is at most 120 s old at asOf and not final'),
  live: z.boolean().describe('activePeers > 0'),
  lastSeenAt: isoInstant().nullable().describe('time of the latest report'),
};
const filtersField = z.array(z.string()).describe('The filters applied, in canonical form (dimensions in order, keeps before drops, values sorted, repeats removed)');
const streamIdField = z.string().describe('`<customerId>:<name>`');

export const StreamSummarySchema = z.object({ streamId: streamIdField, ...figures, ...liveness }).meta({ id: 'StreamSummary' });

export const StreamListSchema = z
  .object({
    window: windowName,
    asOf: isoInstant(),
    streams: z.union([z.array(z.string()).describe('without detail: stream ids'), z.array(StreamSummarySchema).describe('with detail: stream summaries')]),
    filters: filtersField.optional().describe('With filters only: the filters applied (canonical form)'),
  })
  .meta({ id: 'StreamList' });

const dimension = z.enum(BREAKDOWN_DIMENSIONS as [SessionDimension, ...SessionDimension[]]);

/**
 * The `filter` parameter as the OpenAPI document shows it (repeatable: `filter=a&filter=b`). It is
 * parsed by served/breakdown-filters.ts, which words each refusal (invalid_filter).
 */
export const FilterParam = z
  .array(z.string().max(MAX_FILTER_CHARS).regex(/^!?[A-Za-z]+:/))
  .max(MAX_FILTERS)
  .optional()
  .describe(
    `Repeatable. \`<dimension>:<value>\` keeps the sessions with that value, \`!<dimension>:<value>\` drops them; an empty value (\`device:\`) stands for sessions without one (null). Filters of one dimension are alternatives (OR), of different dimensions all apply (AND). Dimensions: ${BREAKDOWN_DIMENSIONS.join(', ')}. At most ${MAX_FILTERS} filters of ${MAX_FILTER_CHARS} characters each.`,
  );

export const BreakdownQuery = z.object({
  by: dimension.describe('The session dimension to group sessions by (required)'),
  window: servedWindowParam,
  streamId: optionalText().describe("One of the caller's streams; without it, every stream of the caller (an operator: the platform)"),
});

const quality = {
  rebufferEvents: count().describe('Σ stallCount'),
  rebufferRatio: fraction().describe('Σ stallMs / (Σ watchMs + Σ stallMs); 0 when both are 0'),
  startupTimeP95Ms: nonNegative().nullable().describe('95th percentile (continuous) of startupMs over the sessions that have one in the window; null when none'),
  p2pConnectionSuccess: fraction().nullable().describe('Σ p2pConnSuccesses / Σ p2pConnAttempts; null when nothing was attempted'),
};

/** The fields an answer for `period=previous` adds. */
const periodFields = {
  period: z.literal('previous').optional().describe('With period=previous only'),
  from: isoInstant().optional().describe('With period=previous only: the period counts the reports with from < ts ≤ to'),
  to: isoInstant().optional().describe('With period=previous only: the end of the period (asOf − window)'),
};

export const StreamMetricsSchema = z
  .object({
    streamId: streamIdField,
    ...figures,
    window: servedWindowName,
    asOf: isoInstant(),
    rebufferEvents: quality.rebufferEvents.optional(),
    rebufferRatio: quality.rebufferRatio.optional(),
    startupTimeP95Ms: quality.startupTimeP95Ms.optional(),
    p2pConnectionSuccess: quality.p2pConnectionSuccess.optional(),
    filters: filtersField.optional().describe('With filters only: the filters applied (canonical form)'),
    ...periodFields,
    activePeers: count().optional().describe("With period=previous only: the stream's sessions active at the period's end (filters do not apply)"),
  })
  .meta({ id: 'StreamMetrics' });

export const SummaryQuery = z.object({
  window: windowParam,
  customerId: optionalText()
    .pipe(z.string().regex(/^[a-z0-9_-]{1,64}$/).optional())
    .describe("Operators: one customer's streams (without it: the platform). A tenant may name only its own customer (403 otherwise)"),
  period: periodParam,
});

export const SummarySchema = z
  .object({
    asOf: isoInstant(),
    window: windowName,
    customerId: z.string().nullable().describe("the customer whose streams are counted together; null: the platform (operators)"),
    filters: filtersField,
    streams: count().describe('streams with a report in the window (filters do not apply)'),
    activePeers: count().describe("Σ of the streams' activePeers (filters do not apply)"),
    ...figures,
    ...quality,
    ...periodFields,
  })
  .meta({ id: 'Summary' });

export const BreakdownRowSchema = z
  .object({ value: z.string().nullable().describe("the dimension's value; null: the sessions without one"), ...figures, ...quality })
  .meta({ id: 'BreakdownRow' });

export const BreakdownSchema = z
  .object({
    asOf: isoInstant(),
    window: servedWindowName,
    by: dimension,
    streamId: z.string().nullable().describe('the stream, or null: every stream of the caller (an operator: the platform)'),
    filters: filtersField,
    rows: z.array(BreakdownRowSchema).describe('one per value of `by`, by totalSessions descending, then value (null last)'),
  })
  .meta({ id: 'Breakdown' });

const platformFigures = { streams: count().describe('streams with a report in the window'), ...figures, ...liveness };

export const PlatformMetricsSchema = z
  .object({
    window: windowName,
    asOf: isoInstant(),
    ...platformFigures,
    customers: z
      .array(z.object({ customerId: z.string(), ...platformFigures }))
      .optional()
      .describe('with groupBy=customer: the same figures per customer that reported in the window'),
  })
  .meta({ id: 'PlatformMetrics' });

export const TimeseriesSchema = z
  .object({
    streamId: z.string(),
    window: windowName,
    bucketSeconds: z.int().min(MIN_BUCKET_SECONDS).max(MAX_BUCKET_SECONDS),
    from: isoInstant().describe('start of the bucket holding asOf − window (for all: of the first report)'),
    to: isoInstant().describe('start of the bucket holding asOf'),
    buckets: z
      .union([z.array(BucketSchema).max(MAX_BUCKETS), z.array(QualityBucketSchema).max(MAX_BUCKETS)])
      .describe('QualityBucket with quality=true, Bucket otherwise'),
    filters: filtersField.optional().describe('With filters only: the filters applied (canonical form)'),
  })
  .meta({ id: 'Timeseries' });

export type StreamList = z.infer<typeof StreamListSchema>;
export type Timeseries = z.infer<typeof TimeseriesSchema>;
