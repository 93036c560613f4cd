// What the billing routes answer, as pure functions of one snapshot's daily series, the tenants
// and the platform's billing defaults: the customers (with a tenant or with data), per-period
// summaries and daily usage, invoices (one per customer per closed month with usage, the fee as
// its amount) and a customer's rates and current month. Money adds up in micro-dollars (toMicros).
import {
  billingForPeriod,
  cents,
  closedMonths,
  dateOf,
  dayMs,
  daysOf,
  DAY_MS,
  invoiceId,
  monthPeriod,
  parseInvoiceId,
  type BillingFigures,
  type BillingTotals,
  type Period,
} from './billing.ts';
import { fromMicros, toMicros, type Rates } from './cost-rules.ts';
import type { BucketRow } from '../warehouse/figures/index.ts';
import type { Tenant } from '../control/tenants.ts';
import { CUSTOMER_ID_PATTERN } from '../warehouse/ids.ts';

/** Everything billing reads, for one snapshot. */
export interface Ledger {
  asOf: string;
  asOfMs: number;
  /** Customers with data in the snapshot. */
  customerIds: readonly string[];
  tenants: readonly Tenant[];
  defaults: { defaultCdnPricePerGb: number; defaultSavingsSharePct: number };
  /** Each of a customer's streams with its daily (86400 s) buckets. */
  daily(customerId: string): [string, readonly BucketRow[]][];
}

export interface Customer {
  customerId: string;
  tenant: Tenant | null;
  rates: Rates;
}

/** Every customer: those with a tenant and those with data in the snapshot, by id. */
export function customersOf(l: Ledger): Customer[] {
  const tenants = new Map(l.tenants.map((t) => [t.customerId, t]));
  const ids = new Set([...tenants.keys(), ...l.customerIds]);
  return [...ids].sort().map((customerId) => {
    const tenant = tenants.get(customerId) ?? null;
    return {
      customerId,
      tenant,
      rates: tenant
        ? { cdnPricePerGb: tenant.cdnPricePerGb, savingsSharePct: tenant.savingsSharePct }
        : { cdnPricePerGb: null, savingsSharePct: l.defaults.defaultSavingsSharePct },
    };
  });
}

export function findCustomer(l: Ledger, customerId: string): Customer | null {
  if (!CUSTOMER_ID_PATTERN.test(customerId)) return null;
  return customersOf(l).find((c) => c.customerId === customerId) ?? null;
}

function figures(l: Ledger, c: Customer, period: Period): BillingFigures {
  return billingForPeriod(l.daily(c.customerId), period, c.rates, l.defaults.defaultCdnPricePerGb);
}

const totalsOf = ({ lineItems: _lines, ...totals }: BillingFigures): BillingTotals => totals;

/**
 * A billing period `from`–`to` (UTC dates, both included). By default the calendar month of the
 * asOf, up to its day; with only `to`, the month of `to` up to it; with only `from`, from it to
 * the asOf's day. A string when the period is not one (from after to, longer than `maxDays`).
 */
export function resolvePeriod(q: { from?: string | undefined; to?: string | undefined }, asOfMs: number, maxDays = 366): Period | { error: string; parameter: 'from' | 'to' } {
  const to = q.to ?? dateOf(asOfMs);
  const from = q.from ?? `${to.slice(0, 7)}-01`;
  if (from > to) return { error: 'from must not be after to.', parameter: 'from' };
  const days = (dayMs(to) - dayMs(from)) / DAY_MS + 1;
  if (days > maxDays) return { error: `A period is at most ${maxDays} days (this one is ${days}).`, parameter: 'to' };
  return { from, to };
}

export function billingSummary(l: Ledger, period: Period) {
  const rows = customersOf(l).map((c) => ({
    customerId: c.customerId,
    tenantId: c.tenant?.id ?? null,
    name: c.tenant?.name ?? null,
    ...totalsOf(figures(l, c, period)),
  }));
  const sumMoney = (f: (r: (typeof rows)[number]) => number) => fromMicros(rows.reduce((a, r) => a + toMicros(f(r)), 0));
  const bytesOffloaded = rows.reduce((a, r) => a + r.bytesOffloaded, 0);
  return {
    ...period,
    asOf: l.asOf,
    currency: 'USD' as const,
    customers: rows,
    totals: {
      bytesOffloaded,
      offloadedGb: bytesOffloaded / 1e9,
      avoidedCdnCost: sumMoney((r) => r.avoidedCdnCost),
      fee: sumMoney((r) => r.fee),
      netSavings: sumMoney((r) => r.netSavings),
    },
  };
}

export function billingUsage(l: Ledger, c: Customer, period: Period) {
  return {
    customerId: c.customerId,
    ...period,
    asOf: l.asOf,
    // Each day is costed on its own; the period's totals are costed over the whole period.
    days: daysOf(period).map((date) => {
      const { currency: _c, cdnPricePerGb: _p, savingsSharePct: _s, assumedRate: _a, ...d } = totalsOf(figures(l, c, { from: date, to: date }));
      return { date, ...d };
    }),
    totals: totalsOf(figures(l, c, period)),
  };
}

function invoiceOf(l: Ledger, c: Customer, month: string, withLines: boolean) {
  const period = monthPeriod(month);
  const f = figures(l, c, period);
  return {
    id: invoiceId(c.customerId, month),
    customerId: c.customerId,
    tenantId: c.tenant?.id ?? null,
    month,
    period,
    status: 'closed' as const,
    currency: 'USD' as const,
    amount: f.fee,
    amountDueCents: cents(f.fee),
    offloadedGb: f.offloadedGb,
    avoidedCdnCost: f.avoidedCdnCost,
    netSavings: f.netSavings,
    cdnPricePerGb: f.cdnPricePerGb,
    savingsSharePct: f.savingsSharePct,
    assumedRate: f.assumedRate,
    ...(withLines ? { lineItems: f.lineItems } : { lineItemCount: f.lineItems.length }),
  };
}

/** Closed months in which the customer delivered anything. */
function invoiceMonths(l: Ledger, c: Customer): string[] {
  const daily = l.daily(c.customerId);
  const first = Math.min(...daily.flatMap(([, rows]) => rows.map((r) => r.startMs)));
  if (!Number.isFinite(first)) return [];
  return closedMonths(first, l.asOfMs).filter((m) => {
    const p = monthPeriod(m);
    const from = dayMs(p.from);
    const end = dayMs(p.to) + DAY_MS;
    return daily.some(([, rows]) => rows.some((r) => r.startMs >= from && r.startMs < end && r.bytesOffloaded + r.bytesFallback > 0));
  });
}

/** Every invoice (of one customer only, if given), without their lines. */
export function invoiceList(l: Ledger, only: string | undefined) {
  const invoices = customersOf(l)
    .filter((c) => only === undefined || c.customerId === only)
    .flatMap((c) => invoiceMonths(l, c).map((m) => invoiceOf(l, c, m, false)));
  return { asOf: l.asOf, invoices };
}

/** One invoice with its lines, or null when there is none by this id. */
export function invoice(l: Ledger, id: string) {
  const parsed = parseInvoiceId(id);
  if (!parsed) return null;
  const c = customersOf(l).find((x) => x.customerId === parsed.customerId);
  if (!c || !invoiceMonths(l, c).includes(parsed.month)) return null;
  return { asOf: l.asOf, ...invoiceOf(l, c, parsed.month, true) };
}

/** A customer's rates and its figures for the month of the asOf, up to its day. */
export function customerBilling(l: Ledger, c: Customer) {
  const month = resolvePeriod({}, l.asOfMs) as Period;
  const f = figures(l, c, month);
  return {
    customerId: c.customerId,
    tenant: c.tenant ? { id: c.tenant.id, name: c.tenant.name, createdAt: c.tenant.createdAt } : null,
    rates: {
      cdnPricePerGb: f.cdnPricePerGb,
      cdnPricePerGbOnFile: c.rates.cdnPricePerGb,
      savingsSharePct: f.savingsSharePct,
      assumedRate: f.assumedRate,
    },
    asOf: l.asOf,
    currentMonth: { ...month, ...f },
  };
}
