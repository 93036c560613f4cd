// The operator's pages: the tenants (each a link to its view), and billing (the period's summary
// per customer and the invoices), read from the operator routes of the API.
import type { Context } from 'koa';
import { formatBytes, formatUsd } from '../../pilot/human-format.ts';
import type { PageState } from '../page-state.ts';
import type { PageReads } from '../figures.ts';
import { pageFrame, type Viewer } from './common.ts';

interface TenantsJson {
  tenants: { id: string; customerId: string; name: string; streams: number; lastReportAt: string | null; originsCount: number; cdnPricePerGb: number | null; savingsSharePct: number }[];
}

export async function tenantsView(ctx: Context, reads: PageReads, state: PageState, viewer: Viewer) {
  const { tenants } = await reads.get<TenantsJson>('/control/tenants');
  return {
    ...pageFrame(ctx, state, viewer, 'tenants'),
    title: 'Tenants',
    noWindow: true,
    tenants: tenants.map((t) => ({ ...t, href: `/portal/?customer=${encodeURIComponent(t.customerId)}`, rate: t.cdnPricePerGb === null ? 'platform default' : `USD ${t.cdnPricePerGb}/GB` })),
  };
}

interface BillingJson {
  from: string;
  to: string;
  customers: { customerId: string; name: string | null; bytesOffloaded: number; avoidedCdnCost: number; fee: number; netSavings: number }[];
  totals: { bytesOffloaded: number; avoidedCdnCost: number; fee: number; netSavings: number };
}
interface InvoicesJson {
  invoices: { id: string; customerId: string; month: string; status: string; amount: number; offloadedGb: number; netSavings: number; assumedRate: boolean }[];
}

export async function billingView(ctx: Context, reads: PageReads, state: PageState, viewer: Viewer) {
  const [summary, invoices] = await Promise.all([reads.get<BillingJson>('/billing/summary'), reads.get<InvoicesJson>('/billing/invoices')]);
  const money = (r: { bytesOffloaded: number; avoidedCdnCost: number; fee: number; netSavings: number }) => ({
    offloaded: formatBytes(r.bytesOffloaded),
    avoided: formatUsd(r.avoidedCdnCost),
    fee: formatUsd(r.fee),
    net: formatUsd(r.netSavings),
  });
  return {
    ...pageFrame(ctx, state, viewer, 'billing'),
    title: 'Billing',
    noWindow: true,
    period: { from: summary.from, to: summary.to },
    customers: summary.customers.map((c) => ({ customerId: c.customerId, name: c.name ?? '', href: `/portal/?customer=${encodeURIComponent(c.customerId)}`, ...money(c) })),
    totals: money(summary.totals),
    invoices: invoices.invoices.map((i) => ({ id: i.id, customerId: i.customerId, month: i.month, status: i.status, amount: formatUsd(i.amount), offloaded: formatBytes(i.offloadedGb * 1e9), net: formatUsd(i.netSavings), assumedRate: i.assumedRate })),
  };
}
