// The cost rules of docs/api.md ("Cost rules", 1 to 6), the one implementation that pilot
// reports and billing share. Money is rounded once, to whole micro-dollars, so that the rules'
// identities (net = avoided − fee) hold to the micro-dollar in every figure a user adds up.
import { z } from 'zod';
import { nonNegative } from '../lib/json-schema.ts';

export interface Rates {
  /** USD per GB of CDN egress on file for the tenant, or null: the platform default is assumed. */
  cdnPricePerGb: number | null;
  /** Percentage of the avoided CDN cost charged as the fee. */
  savingsSharePct: number;
}

/** USD, rounded to the micro-dollar. */
export const money = () => nonNegative().describe('USD, to the micro-dollar');
export const percent = () => z.number().min(0).max(100);

/** The `cost` object of a pilot report (docs/api.md: fixed, users compute with it). */
export const CostSchema = z
  .object({
    currency: z.literal('USD'),
    offloadedGb: nonNegative(),
    cdnPricePerGb: nonNegative(),
    assumedRate: z.boolean().describe('no CDN rate on file: the platform default was used'),
    avoidedCdnCost: money(),
    savingsSharePct: percent(),
    fee: money(),
    netSavings: money(),
  })
  .meta({ id: 'Cost' });

export type Cost = z.infer<typeof CostSchema>;

const MICRO = 1_000_000;

/** USD as whole micro-dollars: the unit in which costs are rounded, once each. */
export function toMicros(usd: number): number {
  return Math.round(usd * MICRO);
}

export function fromMicros(micros: number): number {
  return micros / MICRO;
}

export function costOf(bytesOffloaded: number, rates: Rates, defaultCdnPricePerGb: number): Cost {
  // 1. offloaded GB = bytesOffloaded / 1e9
  const offloadedGb = bytesOffloaded / 1e9;
  // 6. no CDN rate on file: the platform default, and the report says it was assumed
  const assumedRate = rates.cdnPricePerGb === null;
  const cdnPricePerGb = rates.cdnPricePerGb ?? defaultCdnPricePerGb;
  // 2. avoided CDN cost = offloaded GB × price
  const avoided = toMicros(offloadedGb * cdnPricePerGb);
  // 3. fee = avoided × savings share (5. hence zero when nothing was offloaded)
  const fee = Math.round((avoided * rates.savingsSharePct) / 100);
  // 4. net saving = avoided − fee
  return {
    currency: 'USD',
    offloadedGb,
    cdnPricePerGb,
    assumedRate,
    avoidedCdnCost: fromMicros(avoided),
    savingsSharePct: rates.savingsSharePct,
    fee: fromMicros(fee),
    netSavings: fromMicros(avoided - fee),
  };
}
