// Billing from the rollups: a customer's offloaded bytes per stream and UTC day (the daily series
// of the snapshot) priced with the cost rules (cost-rules.ts, shared with the pilot reports).
// A period's figures are one line per stream, each costed once; totals add the lines up to the
// micro-dollar, so an invoice always equals the sum of its line items. Pure functions.
import { z } from 'zod';
import { costOf, fromMicros, money, percent, toMicros, type Cost, type Rates } from './cost-rules.ts';
import { count, nonNegative } from '../lib/json-schema.ts';
import type { BucketRow } from '../warehouse/figures/index.ts';

export const DAY_MS = 86_400_000;

/** A period of whole UTC days, both ends included. */
export interface Period {
  from: string;
  to: string;
}

export function dayMs(date: string): number {
  return Date.parse(`${date}T00:00:00Z`);
}

export function dateOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

const amounts = {
  bytesOffloaded: count(),
  bytesFallback: count(),
  offloadedGb: nonNegative(),
  avoidedCdnCost: money(),
  fee: money(),
  netSavings: money(),
};

/** One stream's line of an invoice or a period. */
export const LineItemSchema = z.object({ streamId: z.string(), ...amounts }).meta({ id: 'LineItem' });

/** A customer's figures over a period, without its lines. */
export const BillingTotalsSchema = z
  .object({
    currency: z.literal('USD'),
    cdnPricePerGb: nonNegative(),
    savingsSharePct: percent(),
    assumedRate: z.boolean().describe('no CDN rate on file: the platform default was used'),
    ...amounts,
  })
  .meta({ id: 'BillingTotals' });

export const BillingFiguresSchema = BillingTotalsSchema.extend({ lineItems: z.array(LineItemSchema) });

export type LineItem = z.infer<typeof LineItemSchema>;
export type BillingTotals = z.infer<typeof BillingTotalsSchema>;
export type BillingFigures = z.infer<typeof BillingFiguresSchema>;

/**
 * Billing figures of a customer's streams over a period. `daily` holds each stream's non-empty
 * 86400 s buckets (aligned to UTC midnight); streams that delivered nothing in the period have no
 * line.
 */
export function billingForPeriod(
  daily: Iterable<[string, readonly BucketRow[]]>,
  period: Period,
  rates: Rates,
  defaultCdnPricePerGb: number,
): BillingFigures {
  const fromMs = dayMs(period.from);
  const endMs = dayMs(period.to) + DAY_MS;
  const lineItems: LineItem[] = [];
  let avoided = 0;
  let fee = 0;
  let off = 0;
  let fb = 0;
  for (const [streamId, rows] of [...daily].sort(([a], [b]) => a.localeCompare(b))) {
    let streamOff = 0;
    let streamFb = 0;
    for (const r of rows) {
      if (r.startMs >= fromMs && r.startMs < endMs) {
        streamOff += r.bytesOffloaded;
        streamFb += r.bytesFallback;
      }
    }
    if (streamOff + streamFb === 0) continue;
    const cost: Cost = costOf(streamOff, rates, defaultCdnPricePerGb);
    lineItems.push({
      streamId,
      bytesOffloaded: streamOff,
      bytesFallback: streamFb,
      offloadedGb: cost.offloadedGb,
      avoidedCdnCost: cost.avoidedCdnCost,
      fee: cost.fee,
      netSavings: cost.netSavings,
    });
    avoided += toMicros(cost.avoidedCdnCost);
    fee += toMicros(cost.fee);
    off += streamOff;
    fb += streamFb;
  }
  const price = costOf(0, rates, defaultCdnPricePerGb);
  return {
    currency: 'USD',
    cdnPricePerGb: price.cdnPricePerGb,
    savingsSharePct: price.savingsSharePct,
    assumedRate: price.assumedRate,
    bytesOffloaded: off,
    bytesFallback: fb,
    offloadedGb: off / 1e9,
    avoidedCdnCost: fromMicros(avoided),
    fee: fromMicros(fee),
    netSavings: fromMicros(avoided - fee),
    lineItems,
  };
}

/** Every UTC day of a period, in order. */
export function daysOf(period: Period): string[] {
  const out: string[] = [];
  for (let ms = dayMs(period.from); ms <= dayMs(period.to); ms += DAY_MS) out.push(dateOf(ms));
  return out;
}

/** The calendar month (YYYY-MM) of a UTC date or instant, and its first and last days. */
export function monthPeriod(month: string): Period {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const first = Date.UTC(y, m - 1, 1);
  const next = Date.UTC(y, m, 1);
  return { from: dateOf(first), to: dateOf(next - DAY_MS) };
}

export function monthOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** Months that ended before `asOfMs` (their last instant is before it), from `firstMs`'s month on. */
export function closedMonths(firstMs: number, asOfMs: number): string[] {
  const out: string[] = [];
  let d = new Date(Date.UTC(new Date(firstMs).getUTCFullYear(), new Date(firstMs).getUTCMonth(), 1));
  for (;;) {
    const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    if (next > asOfMs) break;
    out.push(monthOf(d.getTime()));
    d = new Date(next);
  }
  return out;
}

/** Invoice ids are deterministic: the customer and the month. */
export function invoiceId(customerId: string, month: string): string {
  return `inv_${customerId}_${month}`;
}

export function parseInvoiceId(id: string): { customerId: string; month: string } | null {
  const m = /^inv_([a-z0-9_-]{1,64})_(\d{4}-(0[1-9]|1[0-2]))$/.exec(id);
  return m ? { customerId: m[1]!, month: m[2]! } : null;
}

/** Whole cents of an amount in USD, half up: what an invoice asks to be paid. */
export function cents(usd: number): number {
  return Math.round(toMicros(usd) / 10_000);
}
