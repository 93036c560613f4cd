// Strict ISO 8601 instants (lib/time.ts), hand-worked cases: what a lenient Date parse would
// silently shift is refused.
import { describe, expect, it } from 'vitest';
import { assertAsOfNotAhead, AsOfAheadError, compactIso, parseIsoInstant } from '../../lib/time.ts';

describe('parseIsoInstant', () => {
  it('reads real instants with a zone', () => {
    expect(parseIsoInstant('2026-11-20T21:00:00Z')?.toISOString()).toBe('2026-11-20T21:00:00.000Z');
    expect(parseIsoInstant('2026-11-20T21:00Z')?.toISOString()).toBe('2026-11-20T21:00:00.000Z');
    expect(parseIsoInstant('2026-11-20T21:00:00.123456Z')?.toISOString()).toBe('2026-11-20T21:00:00.123Z');
    expect(parseIsoInstant('2026-11-20T23:30:00+02:00')?.toISOString()).toBe('2026-11-20T21:30:00.000Z');
    expect(parseIsoInstant('2026-11-20T00:30:00-01:00')?.toISOString()).toBe('2026-11-20T01:30:00.000Z');
    expect(parseIsoInstant('2024-02-29T00:00:00Z')?.toISOString()).toBe('2024-02-29T00:00:00.000Z');
  });

  it('refuses what is not a real instant or has no zone', () => {
    for (const bad of [
      '2026-02-30T00:00:00Z', // 2 March for Date.parse
      '2026-02-29T00:00:00Z', // not a leap year
      '2026-04-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-11-20T24:00:00Z',
      '2026-11-20T12:60:00Z',
      '2026-11-20T12:00:60Z',
      '2026-11-20T12:00:00+24:00',
      '2026-11-20T12:00:00', // no zone: local time of whichever machine
      '2026-11-20',
      '20261120T120000Z',
      ' 2026-11-20T12:00:00Z',
      'yesterday',
    ]) {
      expect(parseIsoInstant(bad), bad).toBeNull();
    }
  });
});

describe('assertAsOfNotAhead', () => {
  const now = Date.parse('2026-11-20T12:00:00Z');
  it('lets the past and a small skew through, refuses beyond it', () => {
    expect(() => assertAsOfNotAhead(new Date('2020-01-01T00:00:00Z'), 300_000, now)).not.toThrow();
    expect(() => assertAsOfNotAhead(new Date(now + 300_000), 300_000, now)).not.toThrow();
    expect(() => assertAsOfNotAhead(new Date(now + 300_001), 300_000, now)).toThrow(AsOfAheadError);
    expect(() => assertAsOfNotAhead(new Date('2099-01-01T00:00:00Z'), 300_000, now)).toThrow(/is 26340 days ahead .*refused, nothing written/);
  });
});

describe('compactIso', () => {
  it('names an instant to the millisecond (snapshots, runs, jobs) or to the second (generated files)', () => {
    const t = new Date('2026-11-20T02:55:07.042Z');
    expect(compactIso(t)).toBe('20261120T025507042Z');
    expect(compactIso(t, 's')).toBe('20261120T025507Z');
    expect(compactIso(new Date('2026-11-20T02:55:00Z'), 's')).toBe('20261120T025500Z');
  });
});
