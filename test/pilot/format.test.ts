// How figures read in the Markdown and HTML reports, against strings written out by hand.
import { describe, expect, it } from 'vitest';
import {
  formatBytes,
  formatBytesShort,
  formatDecimalDelta,
  formatGb,
  formatInteger,
  formatMs,
  formatMsDelta,
  formatPercent,
  formatPointsDelta,
  formatSeconds,
  formatUsd,
  formatUsdPerGb,
  formatUtc,
} from '../../pilot/human-format.ts';

describe('report formatting', () => {
  it('bytes in decimal units, GB as the cost rules count them', () => {
    expect(formatBytes(81_578_283_271)).toBe('81.58 GB');
    expect(formatBytes(1_234_567_890_123)).toBe('1.23 TB');
    expect(formatBytes(266_980_000)).toBe('266.98 MB');
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(0)).toBe('0 B');
    expect(formatGb(76.99145462423016)).toBe('76.99 GB');
    expect(formatBytesShort(2_500_000_000)).toBe('2.5 GB');
    expect(formatBytesShort(0)).toBe('0 B');
  });

  it('ratios as percentages, differences in percentage points with a sign', () => {
    expect(formatPercent(0.6421085484554769)).toBe('64.2%');
    expect(formatPercent(0.0012142147501371298, 3)).toBe('0.121%');
    expect(formatPointsDelta(0.7066565761429006)).toBe('+70.7 pp');
    expect(formatPointsDelta(-0.0001525002419651921, 3)).toBe('-0.015 pp');
    // A difference that rounds to nothing has no sign.
    expect(formatPointsDelta(-0.000001)).toBe('0.0 pp');
    expect(formatDecimalDelta(0.059228465478671666)).toBe('+0.06');
  });

  it('money in USD with two decimals, rates with the decimals they need', () => {
    expect(formatUsd(1.223674)).toBe('USD 1.22');
    expect(formatUsd(12345.675)).toBe('USD 12,345.68');
    expect(formatUsd(0)).toBe('USD 0.00');
    expect(formatUsdPerGb(0.02)).toBe('USD 0.02/GB');
    expect(formatUsdPerGb(0.0035)).toBe('USD 0.0035/GB');
  });

  it('integers grouped, times in milliseconds, instants in UTC, bucket sizes in words', () => {
    expect(formatInteger(10449)).toBe('10,449');
    expect(formatMs(1637.8000000000009)).toBe('1,638 ms');
    expect(formatMsDelta(232.19999999999914)).toBe('+232 ms');
    expect(formatUtc('2026-11-20T00:00:53.915Z')).toBe('2026-11-20 00:00:53 UTC');
    expect(formatSeconds(600)).toBe('10 min');
    expect(formatSeconds(21_600)).toBe('6 h');
    expect(formatSeconds(90)).toBe('90 s');
  });

  it('an absent figure reads "no data", never "null" or "NaN"', () => {
    for (const f of [formatInteger, formatPercent, formatMs, formatBytes, formatUsd, formatPointsDelta]) {
      expect(f(null)).toBe('no data');
      expect(f(Number.NaN)).toBe('no data');
    }
    expect(formatUtc(null)).toBe('no data');
  });
});
