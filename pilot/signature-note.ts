// The last line of a Markdown or HTML report: where its signed statement is (file and API path) and
// how to verify it; part of the hashed bytes, so the same pre-rendered or on demand, and no hash.
import { parseStreamId } from '../warehouse/ids.ts';
import type { PilotReport } from './model.ts';

export interface SignatureNote {
  /** The statement's file name, beside the report's own files. */
  file: string;
  /** The report's file names, for the verify command's example. */
  markdownFile: string;
  htmlFile: string;
  /** The API path of the same statement (same snapshot, same bucket size). */
  route: string;
}

/**
 * File names as the static site names them (pilot/report-formats.ts); a stream id that breaks the id
 * rules (only in tests of escaping) is percent-encoded whole, so the names never carry markup.
 */
export function signatureNote(report: Pick<PilotReport, 'streamId' | 'bucketSeconds'>): SignatureNote {
  const base = parseStreamId(report.streamId)?.name ?? encodeURIComponent(report.streamId);
  return {
    file: `${base}.jws`,
    markdownFile: `${base}.md`,
    htmlFile: `${base}.html`,
    route: `/control/reports/pilot/${encodeURIComponent(report.streamId)}?format=jws&bucketSeconds=${report.bucketSeconds}`,
  };
}
