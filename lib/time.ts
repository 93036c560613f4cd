// Strict reading of instants: one parser for every time a user or a job hands over (CLI options,
// job payloads), so that 2026-02-30 is refused rather than read as 2 March, and an asOf ahead of
// the clock is refused before anything is written. And the compact form instants take in names.
import { z } from 'zod';
import { UserError } from './errors.ts';

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):(\d{2}))$/;

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * An ISO 8601 date-time with a zone (`Z` or `±hh:mm`), e.g. 2026-11-20T21:00:00Z, as a Date; null
 * when it is not one or names no real instant (month 13, 30 February, hour 24, second 60).
 */
export function parseIsoInstant(text: string): Date | null {
  const m = ISO_INSTANT.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMin = 0;
  if (m[8] !== 'Z') {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const ms = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMin * 60_000;
  const d = new Date(t);
  return Number.isFinite(t) ? d : null;
}

/** The zod form of `parseIsoInstant`, for options and payloads. */
export const isoInstant = z.string().transform((s, ctx) => {
  const d = parseIsoInstant(s);
  if (d === null) {
    ctx.addIssue({ code: 'custom', message: 'an ISO 8601 date-time with a zone naming a real instant, e.g. 2026-11-20T21:00:00Z' });
    return z.NEVER;
  }
  return d;
});

/** An asOf further ahead of this machine's clock than the allowed skew. */
export class AsOfAheadError extends UserError {
  override name = 'AsOfAheadError';
  override readonly errorCode = 'as_of_ahead';
}

/**
 * Refuse an asOf more than `maxSkewMs` ahead of `now`: a snapshot published with it would stay
 * current, and every later run would be discarded, until that time comes.
 */
export function assertAsOfNotAhead(asOf: Date, maxSkewMs: number, now = Date.now()): void {
  if (asOf.getTime() - now <= maxSkewMs) return;
  throw new AsOfAheadError(
    `asOf ${asOf.toISOString()} is ${describeAhead(asOf.getTime() - now)} ahead of this machine's clock ` +
      `(more than AS_OF_MAX_SKEW_SECONDS=${Math.round(maxSkewMs / 1000)}): refused, nothing written`,
  );
}

/**
 * An instant as a compact UTC stamp for names (snapshots, runs, jobs, generated files) that sort
 * as text in time order: 20261120T210000123Z, or to the second (`'s'`) 20261120T210000Z.
 */
export function compactIso(d: Date, precision: 'ms' | 's' = 'ms'): string {
  const iso = d.toISOString();
  return (precision === 's' ? iso.replace(/\.\d+Z$/, 'Z') : iso).replace(/[-:.]/g, '');
}

export function describeAhead(ms: number): string {
  const s = ms / 1000;
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} days`;
}
