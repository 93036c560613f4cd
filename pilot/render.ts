// A pilot report as a Markdown document and as one self-contained HTML page, and the per-customer
// index page of the static site, through the nunjucks templates of templates/. Deterministic: the
// same report gives the same bytes (fixed locale, UTC, no render time, no random ids).
import path from 'node:path';
import nunjucks from 'nunjucks';
import { PROJECT_ROOT } from '../lib/version.ts';
import type { Criterion, PilotReport } from './model.ts';
import { signatureNote } from './signature-note.ts';
import { bytesChart, offloadRatioChart } from './charts.ts';
import {
  formatBytes,
  formatDecimal,
  formatDecimalDelta,
  formatGb,
  formatHours,
  formatInteger,
  formatKbps,
  formatMs,
  formatMsDelta,
  formatPercent,
  formatPointsDelta,
  formatSeconds,
  formatUsd,
  formatUsdPerGb,
  formatUtc,
} from './human-format.ts';
import { InternalError } from '../lib/errors.ts';

/**
 * Resolved from the project's root, not the working directory (the CLI, workers and tests run
 * anywhere) nor this module's folder (compiled, this code is in dist/: bin/build.js).
 */
export const TEMPLATES_DIR = path.join(PROJECT_ROOT, 'templates');

/**
 * Text from data inside Markdown: every character that could start markup (emphasis, code, links,
 * raw HTML, entities, table cells, headings) is backslash-escaped, and line breaks become spaces,
 * so a stream id or a reason key can neither restyle the document nor break a table row.
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/\r\n?|\n/g, ' ').replace(/[\\`*_[\]<>|~&#]/g, (c) => `\\${c}`);
}

type Filter = (value: never, ...args: never[]) => string;

const FILTERS: Record<string, Filter> = {
  int: formatInteger,
  dec: formatDecimal,
  decDelta: formatDecimalDelta,
  pct: formatPercent,
  pp: formatPointsDelta,
  ms: formatMs,
  msDelta: formatMsDelta,
  bytes: formatBytes,
  gb: formatGb,
  usd: formatUsd,
  usdPerGb: formatUsdPerGb,
  hours: formatHours,
  kbps: formatKbps,
  utc: formatUtc,
  seconds: formatSeconds,
  md: (v: string | number) => escapeMarkdown(String(v)),
};

/**
 * Nunjucks sets autoescape per Environment, and the two formats need opposite settings (HTML-escape
 * every value in HTML; never in Markdown, which escapes with `md`): two Environments, built once by
 * one function with the same loader settings and filters. Templates compile on first use and are
 * cached. `throwOnUndefined` turns a misspelt field into an error instead of an empty cell.
 */
function environment(autoescape: boolean): nunjucks.Environment {
  const loader = new nunjucks.FileSystemLoader(TEMPLATES_DIR, { noCache: false, watch: false });
  const env = new nunjucks.Environment(loader, { autoescape, throwOnUndefined: true, trimBlocks: true, lstripBlocks: true });
  for (const [name, filter] of Object.entries(FILTERS)) env.addFilter(name, filter);
  return env;
}

const htmlEnv = environment(true);
const markdownEnv = environment(false);

/** How each default criterion's threshold and actual read (docs/api.md, "Pilot report JSON"). */
const CRITERION_FORMATS: Record<string, { comparator: '≥' | '≤'; format: (v: number | null) => string }> = {
  min_sessions: { comparator: '≥', format: formatInteger },
  steady_state_offload: { comparator: '≥', format: (v) => formatPercent(v) },
  p2p_connection_success: { comparator: '≥', format: (v) => formatPercent(v) },
  validation_failures: { comparator: '≤', format: formatInteger },
  rebuffer_ratio: { comparator: '≤', format: (v) => formatPercent(v, 3) },
  startup_p95: { comparator: '≤', format: formatMs },
};

export interface CriterionRow {
  id: string;
  description: string;
  threshold: string;
  actual: string;
  passed: boolean;
}

function criterionRow(c: Criterion): CriterionRow {
  // A criterion added to the configuration later still renders, as a plain number.
  const f = CRITERION_FORMATS[c.id] ?? { comparator: '', format: (v: number | null) => formatDecimal(v, 3) };
  return {
    id: c.id,
    description: c.description,
    threshold: `${f.comparator} ${f.format(c.threshold)}`.trim(),
    actual: f.format(c.actual),
    passed: c.passed,
  };
}

/** What both report templates get: the report as it is, and the little that needs code to read well. */
function reportView(report: PilotReport) {
  const r = report.results;
  return {
    r: report,
    title: `Pilot report: ${report.streamId}`,
    bucket: formatSeconds(report.bucketSeconds),
    criteria: report.conclusion.criteria.map(criterionRow),
    uploadCaps: Object.entries(report.configuration.uploadCapsKbps).map(([device, kbps]) => ({ device, kbps })),
    failedCriteria: report.conclusion.criteria.filter((c) => !c.passed).length,
    // The ratio of a bucket without bytes is not a measurement: the page says so instead of "0 %".
    steadyStateMeasured: r.bytesDelivered > 0,
    // The report's last line: where its signed statement is and how to check it (in the hashed bytes).
    signature: signatureNote(report),
  };
}

export function renderPilotMarkdown(report: PilotReport): string {
  return markdownEnv.render('pilot-report.md.njk', reportView(report));
}

export function renderPilotHtml(report: PilotReport): string {
  const view = reportView(report);
  const r = report.results;
  const charts = {
    offload: new nunjucks.runtime.SafeString(offloadRatioChart(r.series, report.bucketSeconds, view.steadyStateMeasured ? r.steadyState.offloadRatio : null)),
    bytes: new nunjucks.runtime.SafeString(bytesChart(r.series, report.bucketSeconds)),
  };
  return htmlEnv.render('pilot-report.html.njk', { ...view, charts });
}

/** The per-customer index page of the static site of pre-rendered reports. */
export interface CustomerReportIndex {
  customerId: string;
  tenantName: string | null;
  snapshot: { id: string; asOf: string };
  reports: {
    streamId: string;
    assessment: 'pass' | 'review';
    sessions: number;
    offloadRatio: number;
    netSavings: number;
    /**
     * Paths of the three files relative to the index page, '/'-separated and not URL-encoded: each
     * segment is encoded here (a stream id's ':' would otherwise read as a URL scheme).
     */
    files: { json: string; md: string; html: string };
  }[];
}

export class IndexLinkError extends InternalError {
  override name = 'IndexLinkError';
  override readonly errorCode = 'report_link_invalid';
}

/** A relative file path as an href; absolute paths would break the site once copied elsewhere. */
export function relativeHref(file: string): string {
  if (file === '' || file.startsWith('/') || file.includes('\\')) {
    throw new IndexLinkError(`a report link must be a relative path with '/' separators: ${JSON.stringify(file)}`);
  }
  return file.split('/').map(encodeURIComponent).join('/');
}

export function renderCustomerIndexHtml(index: CustomerReportIndex): string {
  const rows = [...index.reports]
    .sort((a, b) => (a.streamId < b.streamId ? -1 : a.streamId > b.streamId ? 1 : 0))
    .map((x) => ({ ...x, href: { json: relativeHref(x.files.json), md: relativeHref(x.files.md), html: relativeHref(x.files.html) } }));
  return htmlEnv.render('pilot-index.html.njk', {
    index,
    rows,
    title: `Pilot reports: ${index.tenantName ?? index.customerId}`,
    passed: rows.filter((x) => x.assessment === 'pass').length,
    review: rows.filter((x) => x.assessment === 'review').length,
  });
}
