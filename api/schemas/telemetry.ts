// Requests and responses of the telemetry routes (telemetry-api.md, api-decisions.md "Telemetry").
import { z } from 'zod';
import { count, fraction, isoInstant, nonNegative } from '../../lib/json-schema.ts';
import { BucketSchema } from '../../warehouse/bucket-series.ts';
import { MAX_BUCKET_SECONDS, MIN_BUCKET_SECONDS, WINDOW_NAMES, type WindowName } from '../../warehouse/windows.ts';
import { EXPORT_FORMATS } from '../export/export.ts';
import { MAX_BUCKETS } from '../timeseries.ts';
import { bucketSecondsParam, detailParam, enumParam, optionalText, windowParam } from './params.ts';

const streamIdQuery = optionalText().describe("One of the caller's streams (required: without it the request is refused with 403)");

export const StreamsQuery = z.object({ window: windowParam, detail: detailParam });
export const PlatformMetricsQuery = z.object({ window: windowParam, groupBy: z.enum(['customer']).optional() });
export const StreamMetricsQuery = z.object({ window: windowParam });
export const TimeseriesQuery = z.object({
  streamId: streamIdQuery,
  bucketSeconds: bucketSecondsParam().describe(
    `Seconds per bucket; ${MIN_BUCKET_SECONDS}–${MAX_BUCKET_SECONDS}. 60, 300, 600, 3600, 21600 and 86400 are precomputed; others are computed on demand.`,
  ),
  window: windowParam,
});
export const ExportQuery = z.object({ streamId: streamIdQuery, window: windowParam, format: enumParam(EXPORT_FORMATS, 'csv') });
/** Checked before the rest of the query, so that a foreign or missing stream is a 403 whatever else is wrong. */
export const StreamIdQuery = z.object({ streamId: streamIdQuery });

const windowName = z.enum(WINDOW_NAMES as [WindowName, ...WindowName[]]);

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
const streamIdField = z.string().describe('`<customerId>:<name>`');

export const StreamSummarySchema = z.object({ streamId: streamIdField, ...figures, ...liveness }).meta({ id: 'StreamSummary' });

export const StreamListSchema = z
  .object({
    window: windowName,
    asOf: isoInstant(),
    streams: z.union([z.array(z.string()).describe('without detail: stream ids'), z.array(StreamSummarySchema).describe('with detail: stream summaries')]),
  })
  .meta({ id: 'StreamList' });

export const StreamMetricsSchema = z.object({ streamId: streamIdField, ...figures, window: windowName, asOf: isoInstant() }).meta({ id: 'StreamMetrics' });

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
    buckets: z.array(BucketSchema).max(MAX_BUCKETS),
  })
  .meta({ id: 'Timeseries' });

export type StreamList = z.infer<typeof StreamListSchema>;
export type Timeseries = z.infer<typeof TimeseriesSchema>;
