// Request of GET /control/reports/pilot/:streamId (its response is pilot/pilot-report-schema.ts).
import { z } from 'zod';
import { REPORT_FORMAT_ALIASES, SERVED_FORMATS } from '../../pilot/report-formats.ts';
import { enumParam, optionalBucketSecondsParam } from './params.ts';

/** The largest bucket a pilot report takes (docs/api.md: 60–21600). */
export const MAX_REPORT_BUCKET_SECONDS = 21_600;

export const PilotReportQuery = z.object({
  format: enumParam(SERVED_FORMATS, 'json', REPORT_FORMAT_ALIASES).describe(
    '`markdown` is another name for `md`; `jws` is the signed statement of the other three (docs/pilot-reports.md, "Signatures")',
  ),
  bucketSeconds: optionalBucketSecondsParam(MAX_REPORT_BUCKET_SECONDS).describe(
    "bucket size of the series and charts; default the platform's pilot.defaultBucketSeconds (600)",
  ),
  source: z
    .enum(['current', 'published'])
    .default('current')
    .describe(
      "current: the report at the served snapshot (the nightly run's file when it matches, rendered on demand otherwise); published: the latest report a nightly run published for the stream, whatever its snapshot (its files as they are, at the platform's default bucket size; bucketSeconds is not taken), 404 report_not_published when none did",
    ),
});
