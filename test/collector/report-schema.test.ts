// The report rules: the fast per-column checks give the same verdict (field and reason) as the zod
// schema derived from the column catalog, on every mutation of a valid report; hand-worked ts cases.
import { describe, expect, it } from 'vitest';
import { checkReport, checkReportWithZod, isoToMicros, MAX_MAP_ENTRIES } from '../../collector/session-report-schema.ts';
import { REPORT_COLUMNS } from '../../warehouse/session-reports/columns.ts';
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

  it('reads only a report\'s own fields: a name inherited from Object.prototype is absent', () => {
    const proto = Object.prototype as Record<string, unknown>;
    const withoutRegion = { ...base } as Record<string, unknown>;
    delete withoutRegion['region'];
    const withoutReportId = { ...base } as Record<string, unknown>;
    delete withoutReportId['reportId'];
    try {
      proto['region'] = 'inherited';
      proto['reportId'] = 'rep-inherited';
      const r = checkReport(structuredClone(withoutRegion), WINDOW);
      expect(r.ok).toBe(true);
      if (r.ok) expect(Object.hasOwn(r.report, 'region')).toBe(false);
      expect(checkReport(structuredClone(withoutReportId), WINDOW)).toEqual({ ok: false, field: 'reportId', reason: 'is required' });
    } finally {
      delete proto['region'];
      delete proto['reportId'];
    }
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
    expect(isoToMicros('0050-03-01T00:00:00Z')).toBe(Date.parse('0050-03-01T00:00:00Z') * 1000); // not 1950
  });

  it('reads exactly the grammar of ISO 8601 with a zone: 20 000 near-misses against a regular expression and calendar arithmetic', () => {
    // The oracle: the grammar as a regular expression, the date by days-from-civil arithmetic.
    const GRAMMAR = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/;
    const daysFromCivil = (y: number, m: number, d: number) => {
      const yy = m <= 2 ? y - 1 : y;
      const era = Math.floor(yy / 400);
      const yoe = yy - era * 400;
      const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
      return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468;
    };
    const oracle = (text: string): number | null => {
      const m = GRAMMAR.exec(text);
      if (!m) return null;
      const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i]));
      const leap = y! % 4 === 0 && (y! % 100 !== 0 || y! % 400 === 0);
      const monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
      if (mo! < 1 || mo! > 12 || d! < 1 || d! > monthDays[mo! - 1]! || h! > 23 || mi! > 59 || s! > 59) return null;
      let offset = 0;
      if (m[8] === undefined) {
        const [zh, zm] = [Number(m[10]), Number(m[11])];
        if (zh > 23 || zm > 59) return null;
        offset = (m[9] === '-' ? -1 : 1) * (zh * 60 + zm);
      }
      const fraction = m[7] === undefined ? 0 : Number(m[7].padEnd(6, '0').slice(0, 6));
      return ((daysFromCivil(y!, mo!, d!) * 86_400 + h! * 3600 + mi! * 60 + s! - offset * 60) * 1000) * 1000 + fraction;
    };
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T,>(xs: readonly T[]): T => xs[rand(xs.length)]!;
    const two = (n: number) => String(n).padStart(2, '0');
    let valid = 0;
    for (let i = 0; i < 20_000; i++) {
      const year = String(pick([1969, 1970, 2000, 2026, 2028, 2100, 2400, 50, 0, 9999, rand(10_000)])).padStart(4, '0');
      let text =
        `${year}-${two(pick([1, 2, 2, 4, 12, 0, 13, rand(100)]))}-${two(pick([1, 28, 29, 30, 31, 0, 32, rand(100)]))}` +
        `T${two(pick([0, 12, 23, 24, rand(100)]))}:${two(pick([0, 59, 60, rand(100)]))}:${two(pick([0, 59, 60, rand(100)]))}` +
        pick(['', '', '.', `.${'1234567890'.slice(0, 1 + rand(10))}`, `.${String(rand(1_000_000_000)).padStart(9, '0')}`]) +
        pick(['Z', 'Z', '', 'z', `+${two(rand(25))}:${two(rand(61))}`, `-${two(rand(25))}:${two(rand(61))}`, '+0100', '+01:0', 'ZZ', '+01:00Z']);
      // Every other case starts from a real instant, with a fraction of 0 to 9 digits and a zone.
      if (i % 2 === 0) {
        const iso = new Date(rand(2 ** 31) * 997 - 2 ** 40).toISOString();
        text = iso.slice(0, 19) + pick(['', `.${'123456789'.slice(0, 1 + rand(9))}`]) + pick(['Z', `+${two(rand(24))}:${two(rand(60))}`, `-${two(rand(24))}:${two(rand(60))}`]);
      }
      // Now and then one character replaced, dropped or doubled.
      const at = rand(text.length);
      const edit = rand(8);
      if (edit === 0) text = text.slice(0, at) + pick(['0', '9', '-', ':', 'T', ' ', '.', '\u0660', 'a']) + text.slice(at + 1);
      else if (edit === 1) text = text.slice(0, at) + text.slice(at + 1);
      else if (edit === 2) text = text.slice(0, at) + text[at] + text.slice(at);
      const want = oracle(text);
      if (want !== null) valid++;
      expect(isoToMicros(text), text).toBe(want);
    }
    // Both sides of the grammar were tried many times.
    expect(valid).toBeGreaterThan(1000);
    expect(valid).toBeLessThan(19_000);
  });
});
