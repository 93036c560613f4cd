// Requests and responses of the billing routes (operators, billing:read).
import { z } from 'zod';
import { count, isoDate, isoInstant, nonNegative } from '../../lib/json-schema.ts';
import { BillingTotalsSchema, LineItemSchema } from '../../billing/billing.ts';
import { money, percent } from '../../billing/cost-rules.ts';
import { dateParam, optionalText } from './params.ts';

export const PeriodQuery = z.object({
  from: dateParam('first day (UTC), YYYY-MM-DD; default the first of the month of `to`'),
  to: dateParam("last day (UTC), YYYY-MM-DD, included; default the snapshot's day"),
});
export const InvoicesQuery = z.object({ customerId: optionalText().describe("only this customer's") });

const period = { from: isoDate(), to: isoDate() };

export const BillingSummarySchema = z
  .object({
    ...period,
    asOf: isoInstant(),
    currency: z.literal('USD'),
    customers: z.array(BillingTotalsSchema.extend({ customerId: z.string(), tenantId: z.string().nullable(), name: z.string().nullable() })),
    totals: z.object({ bytesOffloaded: count(), offloadedGb: nonNegative(), avoidedCdnCost: money(), fee: money(), netSavings: money() }),
  })
  .meta({ id: 'BillingSummary' });

export const BillingUsageSchema = z
  .object({
    customerId: z.string(),
    ...period,
    asOf: isoInstant(),
    days: z.array(LineItemSchema.omit({ streamId: true }).extend({ date: isoDate() })).describe('each day costed on its own'),
    totals: BillingTotalsSchema.describe('the period costed as a whole'),
  })
  .meta({ id: 'BillingUsage' });

const invoiceFields = {
  id: z.string().regex(/^inv_[a-z0-9_-]+_\d{4}-\d{2}$/),
  customerId: z.string(),
  tenantId: z.string().nullable(),
  month: z.string().regex(/^\d{4}-\d{2}$/),
  period: z.object(period),
  status: z.literal('closed'),
  currency: z.literal('USD'),
  amount: money().describe('the fee'),
  amountDueCents: count().describe('the amount in whole cents, half up'),
  offloadedGb: nonNegative(),
  avoidedCdnCost: money(),
  netSavings: money(),
  cdnPricePerGb: nonNegative(),
  savingsSharePct: percent(),
  assumedRate: z.boolean(),
};

export const InvoiceSummarySchema = z.object({ ...invoiceFields, lineItemCount: count() }).meta({ id: 'InvoiceSummary' });
export const InvoiceListSchema = z.object({ asOf: isoInstant(), invoices: z.array(InvoiceSummarySchema) }).meta({ id: 'InvoiceList' });
export const InvoiceSchema = z.object({ asOf: isoInstant(), ...invoiceFields, lineItems: z.array(LineItemSchema) }).meta({ id: 'Invoice' });

export const CustomerBillingSchema = z
  .object({
    customerId: z.string(),
    tenant: z.object({ id: z.string(), name: z.string(), createdAt: isoInstant() }).nullable(),
    rates: z.object({
      cdnPricePerGb: nonNegative(),
      cdnPricePerGbOnFile: nonNegative().nullable(),
      savingsSharePct: percent(),
      assumedRate: z.boolean(),
    }),
    asOf: isoInstant(),
    currentMonth: BillingTotalsSchema.extend({ ...period, lineItems: z.array(LineItemSchema) }),
  })
  .meta({ id: 'CustomerBilling' });

export type BillingSummary = z.infer<typeof BillingSummarySchema>;
export type BillingUsage = z.infer<typeof BillingUsageSchema>;
export type InvoiceSummary = z.infer<typeof InvoiceSummarySchema>;
export type Invoice = z.infer<typeof InvoiceSchema>;
export type CustomerBilling = z.infer<typeof CustomerBillingSchema>;
