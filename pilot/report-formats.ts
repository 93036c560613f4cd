// The three forms of a pilot report (docs/api.md: json, md or markdown, html) and its signed
// statement (jws, pilot/statement.ts): their media types, their file names in the static site and
// as downloads, and the one function that renders a report in any of the three forms. The API and the nightly run both render through `renderReport`, which
// is what makes a pre-rendered file and an on-demand answer the same bytes.
import { parseStreamId } from '../warehouse/ids.ts';
import type { PilotReport } from './model.ts';
import { renderPilotHtml, renderPilotMarkdown } from './render.ts';
import { reportJson } from './service.ts';

export const REPORT_FORMATS = ['json', 'md', 'html'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** The signed statement of a report's three forms, served and published beside them. */
export const SERVED_FORMATS = [...REPORT_FORMATS, 'jws'] as const;
export type ServedFormat = (typeof SERVED_FORMATS)[number];

/** Other names a client may use for a format. */
export const REPORT_FORMAT_ALIASES: Readonly<Record<string, ReportFormat>> = { markdown: 'md' };

export const REPORT_MEDIA_TYPES: Readonly<Record<ServedFormat, string>> = {
  json: 'application/json; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  html: 'text/html; charset=utf-8',
  // RFC 7515 §9.2.1: a JWS in compact serialization.
  jws: 'application/jose',
};

export function isReportFormat(v: string): v is ReportFormat {
  return (REPORT_FORMATS as readonly string[]).includes(v);
}

/**
 * The report's file name inside its customer's folder: the stream's name part (unique within a
 * customer, and made of [A-Za-z0-9._~-] only, so portable to any file system and static host)
 * with the format as extension.
 */
export function reportFileName(streamId: string, format: ServedFormat): string {
  const id = parseStreamId(streamId);
  if (!id) throw new Error(`not a stream id: ${JSON.stringify(streamId)}`);
  return `${id.name}.${format}`;
}

/** The file name a browser saves a downloaded report under. */
export function reportDownloadName(streamId: string, format: ServedFormat): string {
  const id = parseStreamId(streamId);
  if (!id) throw new Error(`not a stream id: ${JSON.stringify(streamId)}`);
  return `pilot-report-${id.customerId}-${id.name}.${format}`;
}

/** The report in one format, as the bytes served and published. */
export function renderReport(report: PilotReport, format: ReportFormat): string {
  switch (format) {
    case 'json':
      return reportJson(report);
    case 'md':
      return renderPilotMarkdown(report);
    case 'html':
      return renderPilotHtml(report);
  }
}
