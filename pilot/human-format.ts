// Numbers, bytes, money and times of a pilot report as people read them (Markdown and HTML).
// One fixed locale and UTC everywhere: the same report renders to the same bytes on any machine.

const LOCALE = 'en-US';
const NO_DATA = 'no data';

const integer = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0 });
const decimals = new Map<number, Intl.NumberFormat>();
const percents = new Map<number, Intl.NumberFormat>();
const points = new Map<number, Intl.NumberFormat>();
const signedDecimals = new Map<number, Intl.NumberFormat>();
// A rate per GB is often below a cent: two decimals would print 0.0035 as 0.00.
const rate = new Intl.NumberFormat(LOCALE, { minimumFractionDigits: 2, maximumFractionDigits: 6 });
const signedInteger = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0, signDisplay: 'exceptZero' });

function cached(map: Map<number, Intl.NumberFormat>, digits: number, make: () => Intl.NumberFormat): Intl.NumberFormat {
  let f = map.get(digits);
  if (!f) map.set(digits, (f = make()));
  return f;
}

const finite = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/** 12,345 */
export function formatInteger(v: number | null | undefined): string {
  return finite(v) ? integer.format(v) : NO_DATA;
}

/** 7.87 (fixed number of decimals) */
export function formatDecimal(v: number | null | undefined, digits = 2): string {
  if (!finite(v)) return NO_DATA;
  const f = cached(decimals, digits, () => new Intl.NumberFormat(LOCALE, { minimumFractionDigits: digits, maximumFractionDigits: digits }));
  return f.format(v);
}

/** A signed difference: +0.06 */
export function formatDecimalDelta(v: number | null | undefined, digits = 2): string {
  if (!finite(v)) return NO_DATA;
  const f = cached(signedDecimals, digits, () => new Intl.NumberFormat(LOCALE, { minimumFractionDigits: digits, maximumFractionDigits: digits, signDisplay: 'exceptZero' }));
  return f.format(v);
}

/** A ratio (0–1) as a percentage: 0.6421 → 64.2% */
export function formatPercent(ratio: number | null | undefined, digits = 1): string {
  if (!finite(ratio)) return NO_DATA;
  const f = cached(percents, digits, () => new Intl.NumberFormat(LOCALE, { style: 'percent', minimumFractionDigits: digits, maximumFractionDigits: digits }));
  return f.format(ratio);
}

/** A difference of two ratios, in percentage points, signed: 0.7067 → +70.7 pp */
export function formatPointsDelta(delta: number | null | undefined, digits = 1): string {
  if (!finite(delta)) return NO_DATA;
  const f = cached(points, digits, () => new Intl.NumberFormat(LOCALE, { minimumFractionDigits: digits, maximumFractionDigits: digits, signDisplay: 'exceptZero' }));
  return `${f.format(delta * 100)} pp`;
}

/** Milliseconds: 1,870 ms */
export function formatMs(v: number | null | undefined): string {
  return finite(v) ? `${integer.format(v)} ms` : NO_DATA;
}

/** A signed difference in milliseconds: +232 ms */
export function formatMsDelta(v: number | null | undefined): string {
  return finite(v) ? `${signedInteger.format(v)} ms` : NO_DATA;
}

// Decimal units, as the cost rules count GB (bytes / 1e9).
const BYTE_UNITS: readonly [number, string][] = [
  [1e12, 'TB'],
  [1e9, 'GB'],
  [1e6, 'MB'],
  [1e3, 'kB'],
];

/** Bytes in the largest decimal unit that keeps the number at least 1: 81578283271 → 81.58 GB */
export function formatBytes(bytes: number | null | undefined): string {
  if (!finite(bytes)) return NO_DATA;
  const abs = Math.abs(bytes);
  for (const [size, unit] of BYTE_UNITS) {
    if (abs >= size) return `${formatDecimal(bytes / size, 2)} ${unit}`;
  }
  return `${integer.format(bytes)} B`;
}

/** A quantity already in GB (cost and forecast figures), shown like bytes. */
export function formatGb(gb: number | null | undefined): string {
  return finite(gb) ? formatBytes(gb * 1e9) : NO_DATA;
}

// Money is written "USD 1.63", not "$1.63": two dollar signs on one Markdown line read as inline
// math to some renderers (GitHub among them).

/** USD with two decimals: USD 1,234.56 */
export function formatUsd(v: number | null | undefined): string {
  return finite(v) ? `USD ${formatDecimal(v, 2)}` : NO_DATA;
}

/** A price per GB, with the decimals it needs: USD 0.0035/GB */
export function formatUsdPerGb(v: number | null | undefined): string {
  return finite(v) ? `USD ${rate.format(v)}/GB` : NO_DATA;
}

/** Hours with one decimal: 5.98 → 6.0 h */
export function formatHours(v: number | null | undefined): string {
  return finite(v) ? `${formatDecimal(v, 1)} h` : NO_DATA;
}

/** Bitrate: 2949.86 kbps → 2,950 kbps */
export function formatKbps(v: number | null | undefined): string {
  return finite(v) ? `${integer.format(v)} kbps` : NO_DATA;
}

const ISO_UTC = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z$/;

/** An ISO instant in UTC, to the second: 2026-11-20T00:00:53.915Z → 2026-11-20 00:00:53 UTC */
export function formatUtc(iso: string | null | undefined): string {
  if (typeof iso !== 'string') return NO_DATA;
  const m = ISO_UTC.exec(iso);
  // Anything else is shown as it came: a report never holds one, and hiding it would hide a bug.
  return m ? `${m[1]} ${m[2]} UTC` : iso;
}

/** A bucket size in words: 600 → 10 min, 21600 → 6 h */
export function formatSeconds(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

const axisNumber = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 2 });

/** Bytes for an axis label, without trailing zeros: 2.5 GB, 10 GB, 0 B */
export function formatBytesShort(bytes: number): string {
  const abs = Math.abs(bytes);
  for (const [size, unit] of BYTE_UNITS) {
    if (abs >= size) return `${axisNumber.format(bytes / size)} ${unit}`;
  }
  return `${axisNumber.format(bytes)} B`;
}
