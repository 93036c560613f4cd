// The report rules: the fast per-column checks give the same verdict (field and reason) as the zod
// schema derived from the column catalog, on every mutation of a valid report; hand-worked ts cases.
import { describe, expect, it } from 'vitest';
import { checkReport, checkReportWithZod, isoToMicros, MAX_MAP_ENTRIES } from '../../collector/report-schema.ts';
import { REPORT_COLUMNS } from '../../warehouse/report-columns.ts';
import { sampleReport } from '../helpers/collector.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const WINDOW = { latestMs: NOW + 600_000, earliestMs: NOW - 35 * 86_400_000 };
const base = sampleReport('acme:live-main', new Date(NOW - 60_000), 0);

const VALUES: unknown[] = [
  null, undefined, '', 'x', 'x'.repeat(257), 0, -1, 1.5, -0.5, 2 ** 31, 2 ** 53, 1e300, true, false, [], [1], {}, { a: 1 }, { a: -1 }, { a: 1.5 }, { '': 1 },
  { ['k'.repeat(65)]: 1 }, Object.fromEntries(Array.from({ length: MAX_MAP_ENTRIES + 1 }, (_, i) => [`k${i}`, 1])), { a: 'one' }, 'acme:ok', 'acme:bad name', 'globex:x',
  'lone \ud800 surrogate', { ['k\udc00']: 1 }, 'emoji 😀', 'nul \u0000 ok',
  'p2p', 'control', 'live', 'vod', 'hybrid', 'cdn', 'tv', 'mobile', '2026-11-20T11:59:00Z', '2026-11-20T11:59:00.123456+01:00', '2026-11-20T13:00:00Z',
  '2025-01-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-11-20 11:59:00', NOW - 1000, NOW + 3_600_000,
];

describe('report checks', () => {
  it('the fast checks and the zod schema agree on every mutation', () => {
    let compared = 0;
    const cases: unknown[] = [base, null, [], 'report', 42];
    for (const col of REPORT_COLUMNS) {
      for (const v of VALUES) {
        const r = { ...base } as Record<string, unknown>;
        if (v === undefined) delete r[col.name];
        else r[col.name] = v;
        cases.push(r);
      }
    }
    for (const c of cases) {
      const fast = checkReport(structuredClone(c), WINDOW);
      const slow = checkReportWithZod(structuredClone(c), WINDOW);
      expect(fast.ok, JSON.stringify(c)?.slice(0, 200)).toBe(slow.ok);
      if (!fast.ok && !slow.ok) {
        expect(fast.field, JSON.stringify(c)?.slice(0, 200)).toBe(slow.field);
        // zod words a bad map key as a bad map; elsewhere the reasons are the same words.
        if (!['fallbackReasons', 'bytesByPath'].includes(fast.field ?? '')) expect(fast.reason, JSON.stringify(c)?.slice(0, 200)).toBe(slow.reason);
      } else if (fast.ok && slow.ok) {
        // A null optional field may be kept or left out: both land as NULL.
        const noNulls = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null));
        expect(noNulls(fast.report)).toEqual(noNulls(slow.report));
      }
      compared++;
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('accepts the valid report, drops unknown fields and turns ts into epoch microseconds', () => {
    const r = checkReport({ ...base, extra: 1, ts: '2026-11-20T11:59:00.123456Z' }, WINDOW);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.report['extra']).toBeUndefined();
    expect(r.report.ts).toBe(Date.parse('2026-11-20T11:59:00.123Z') * 1000 + 456);
  });

  it('reads ISO 8601 with zones and fractions by hand-worked values', () => {
    expect(isoToMicros('1970-01-01T00:00:00Z')).toBe(0);
    expect(isoToMicros('1970-01-01T00:00:01.5Z')).toBe(1_500_000);
    expect(isoToMicros('1970-01-01T01:00:00+01:00')).toBe(0);
    expect(isoToMicros('1969-12-31T23:30:00-00:30')).toBe(0);
    expect(isoToMicros('1970-01-01T00:00:00.000001Z')).toBe(1);
    expect(isoToMicros('1970-01-01T00:00:00.0000019Z')).toBe(1); // nanoseconds truncated
    expect(isoToMicros('2026-02-29T00:00:00Z')).toBeNull(); // not a leap year
    expect(isoToMicros('2028-02-29T00:00:00Z')).not.toBeNull();
    expect(isoToMicros('2026-11-20T12:00:00')).toBeNull(); // no zone
    expect(isoToMicros('2026-11-20T24:00:00Z')).toBeNull();
  });
});
