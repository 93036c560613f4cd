// What the rendering tests share: the spec's sections, every report of the fixture by name, a
// report with every text field made hostile, and a customer's index built from the fixture.
import type { PilotFixture } from './fixtures.ts';
import type { PilotReport } from '../../pilot/model.ts';
import type { CustomerReportIndex } from '../../pilot/render.ts';

/** The spec's table of sections (docs/api.md, "Pilot report"), in its order. */
export const SECTIONS = ['Pilot metadata', 'Configuration', 'Results', 'Routing breakdown', 'Cost impact', 'Event economics', 'Conclusion'];

export const EVIL = '<x-evil a="1">|*_`[&#';
const TIME_KEYS = new Set(['start', 'end', 'at', 'from', 'to', 'asOf']);

/** A copy of a report with every text from data (not the instants the charts place) made hostile. */
export function poisoned(report: PilotReport): PilotReport {
  const walk = (v: unknown, key: string): unknown => {
    if (typeof v === 'string') return TIME_KEYS.has(key) ? v : `${EVIL}${v}`;
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'uploadCapsKbps' ? Object.fromEntries(Object.entries(x as object).map(([d, n]) => [`${EVIL}${d}`, n])) : walk(x, k)]));
    return v;
  };
  return walk(report, '') as PilotReport;
}

export function everyReport(f: PilotFixture): [string, PilotReport][] {
  return [
    ['withControl', f.withControl],
    ['withoutControl', f.withoutControl],
    ['oneBucket', f.oneBucket],
    ['twoBuckets', f.twoBuckets],
    ['minuteBuckets', f.minuteBuckets],
    ['allZero', f.allZero],
    ...[...f.reports].map(([id, r]): [string, PilotReport] => [id, r]),
  ];
}

/** The index of one customer's reports, listed in reverse order (the page sorts them). */
export function indexFor(f: PilotFixture, customerId: string, tenantName: string | null, htmlFolder = ''): CustomerReportIndex {
  return {
    customerId,
    tenantName,
    snapshot: f.snapshot,
    reports: [...f.reports.values()]
      .filter((r) => r.customerId === customerId)
      .reverse()
      .map((r) => ({
        streamId: r.streamId,
        assessment: r.conclusion.assessment,
        sessions: r.results.sessions,
        offloadRatio: r.results.offloadRatio,
        netSavings: r.cost.netSavings,
        files: { json: `${r.streamId}.json`, md: `${r.streamId}.md`, html: `${htmlFolder}${r.streamId}.html` },
      })),
  };
}
