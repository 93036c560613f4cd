// The billing routes (operators, billing:read): summaries, daily usage, invoices (one per customer
// per closed month, the fee as its amount, with a line per stream) and a customer's rates and
// current month, all computed from the snapshot's daily series with the shared cost rules.
import type { Router, RouterMiddleware } from '@koa/router';
import type { Context } from 'koa';
import { problems } from '../errors.ts';
import { snapshotOf } from './telemetry.ts';
import { operatorGuard } from './operator.ts';
import { periodParams, queryOf, textParam } from '../query.ts';
import type { ApiDeps } from '../deps.ts';
import type { ServedSnapshot } from '../snapshot-store.ts';
import {
  billingForPeriod,
  cents,
  closedMonths,
  daysOf,
  invoiceId,
  monthPeriod,
  parseInvoiceId,
  type BillingFigures,
  type Period,
} from '../../billing/billing.ts';
import type { Rates } from '../../billing/cost-rules.ts';
import { listTenants, type Tenant } from '../../warehouse/control/tenants.ts';
import { CUSTOMER_ID_PATTERN, streamBelongsTo } from '../../warehouse/ids.ts';
import type { BucketRow } from '../../warehouse/bucket-series.ts';

/** Each of a customer's streams with its daily buckets, read from the snapshot's series files. */
async function dailyOf(deps: ApiDeps, snap: ServedSnapshot, customerId: string): Promise<[string, readonly BucketRow[]][]> {
  return [...(await deps.series.daily(snap, customerId))].filter(([streamId]) => streamBelongsTo(streamId, customerId));
}

interface Customer {
  customerId: string;
  tenant: Tenant | null;
  rates: Rates;
}

/** Every customer: those with a tenant and those with data in the snapshot, by id. */
async function customers(deps: ApiDeps, snap: ServedSnapshot): Promise<Customer[]> {
  const tenants = new Map((await listTenants(deps.layout)).map((t) => [t.customerId, t]));
  const ids = new Set([...tenants.keys(), ...snap.manifest.partitions.map((p) => p.customerId)]);
  return [...ids].sort().map((customerId) => customerOf(deps, customerId, tenants.get(customerId) ?? null));
}

function customerOf(deps: ApiDeps, customerId: string, tenant: Tenant | null): Customer {
  return {
    customerId,
    tenant,
    rates: tenant
      ? { cdnPricePerGb: tenant.cdnPricePerGb, savingsSharePct: tenant.savingsSharePct }
      : { cdnPricePerGb: null, savingsSharePct: deps.platform.billing.defaultSavingsSharePct },
  };
}

async function oneCustomer(deps: ApiDeps, snap: ServedSnapshot, customerId: string): Promise<Customer> {
  if (!CUSTOMER_ID_PATTERN.test(customerId)) throw problems.customerNotFound();
  const found = (await customers(deps, snap)).find((c) => c.customerId === customerId);
  if (!found) throw problems.customerNotFound();
  return found;
}

async function figures(deps: ApiDeps, snap: ServedSnapshot, c: Customer, period: Period): Promise<BillingFigures> {
  return billingForPeriod(await dailyOf(deps, snap, c.customerId), period, c.rates, deps.platform.billing.defaultCdnPricePerGb);
}

const totalsOf = ({ lineItems: _lines, ...totals }: BillingFigures) => totals;

async function invoiceOf(deps: ApiDeps, snap: ServedSnapshot, c: Customer, month: string, withLines: boolean) {
  const period = monthPeriod(month);
  const f = await figures(deps, snap, c, period);
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
async function invoiceMonths(deps: ApiDeps, snap: ServedSnapshot, c: Customer): Promise<string[]> {
  const daily = await dailyOf(deps, snap, c.customerId);
  const first = Math.min(...daily.flatMap(([, rows]) => rows.map((r) => r.startMs)));
  if (!Number.isFinite(first)) return [];
  return closedMonths(first, snap.asOfMs).filter((m) => {
    const p = monthPeriod(m);
    const from = Date.parse(`${p.from}T00:00:00Z`);
    const end = Date.parse(`${p.to}T00:00:00Z`) + 86_400_000;
    return daily.some(([, rows]) => rows.some((r) => r.startMs >= from && r.startMs < end && r.bytesOffloaded + r.bytesFallback > 0));
  });
}

function send(ctx: Context, snap: ServedSnapshot, body: unknown): void {
  ctx.set('Cache-Control', 'private, no-cache');
  ctx.set('Last-Modified', snap.lastModified);
  ctx.body = body;
}

export function billingRoutes(router: Router, deps: ApiDeps, auth: RouterMiddleware): void {
  const guard = operatorGuard('billing:read');
  const param = (ctx: Context, name: string) => String((ctx.params as Record<string, string>)[name]);

  router.get('/billing/summary', auth, guard, async (ctx) => {
    const snap = snapshotOf(ctx);
    const period = periodParams(queryOf(ctx), snap.asOfMs);
    const rows = await Promise.all(
      (await customers(deps, snap)).map(async (c) => ({
        customerId: c.customerId,
        tenantId: c.tenant?.id ?? null,
        name: c.tenant?.name ?? null,
        ...totalsOf(await figures(deps, snap, c, period)),
      })),
    );
    const micro = (f: (r: (typeof rows)[number]) => number) => rows.reduce((a, r) => a + Math.round(f(r) * 1e6), 0) / 1e6;
    send(ctx, snap, {
      ...period,
      asOf: snap.manifest.asOf,
      currency: 'USD',
      customers: rows,
      totals: {
        bytesOffloaded: rows.reduce((a, r) => a + r.bytesOffloaded, 0),
        offloadedGb: rows.reduce((a, r) => a + r.bytesOffloaded, 0) / 1e9,
        avoidedCdnCost: micro((r) => r.avoidedCdnCost),
        fee: micro((r) => r.fee),
        netSavings: micro((r) => r.netSavings),
      },
    });
  });

  router.get('/billing/usage/:customerId', auth, guard, async (ctx) => {
    const snap = snapshotOf(ctx);
    const period = periodParams(queryOf(ctx), snap.asOfMs);
    const c = await oneCustomer(deps, snap, param(ctx, 'customerId'));
    const days = await Promise.all(daysOf(period).map(async (date) => ({ date, ...totalsOf(await figures(deps, snap, c, { from: date, to: date })) })));
    send(ctx, snap, {
      customerId: c.customerId,
      ...period,
      asOf: snap.manifest.asOf,
      // Each day is costed on its own; the period's totals are costed over the whole period.
      days: days.map(({ currency: _c, cdnPricePerGb: _p, savingsSharePct: _s, assumedRate: _a, ...d }) => d),
      totals: totalsOf(await figures(deps, snap, c, period)),
    });
  });

  router.get('/billing/invoices', auth, guard, async (ctx) => {
    const snap = snapshotOf(ctx);
    const only = textParam(queryOf(ctx), 'customerId');
    const chosen = (await customers(deps, snap)).filter((c) => only === undefined || c.customerId === only);
    const list = (
      await Promise.all(chosen.map(async (c) => Promise.all((await invoiceMonths(deps, snap, c)).map((m) => invoiceOf(deps, snap, c, m, false)))))
    ).flat();
    send(ctx, snap, { asOf: snap.manifest.asOf, invoices: list });
  });

  router.get('/billing/invoices/:id', auth, guard, async (ctx) => {
    const snap = snapshotOf(ctx);
    const parsed = parseInvoiceId(param(ctx, 'id'));
    if (!parsed) throw problems.invoiceNotFound();
    const c = (await customers(deps, snap)).find((x) => x.customerId === parsed.customerId);
    if (!c || !(await invoiceMonths(deps, snap, c)).includes(parsed.month)) throw problems.invoiceNotFound();
    send(ctx, snap, { asOf: snap.manifest.asOf, ...(await invoiceOf(deps, snap, c, parsed.month, true)) });
  });

  router.get('/billing/customers/:customerId', auth, guard, async (ctx) => {
    const snap = snapshotOf(ctx);
    const c = await oneCustomer(deps, snap, param(ctx, 'customerId'));
    const month = periodParams({}, snap.asOfMs);
    const f = await figures(deps, snap, c, month);
    send(ctx, snap, {
      customerId: c.customerId,
      tenant: c.tenant ? { id: c.tenant.id, name: c.tenant.name, createdAt: c.tenant.createdAt } : null,
      rates: {
        cdnPricePerGb: f.cdnPricePerGb,
        cdnPricePerGbOnFile: c.rates.cdnPricePerGb,
        savingsSharePct: f.savingsSharePct,
        assumedRate: f.assumedRate,
      },
      asOf: snap.manifest.asOf,
      currentMonth: { ...month, ...f },
    });
  });
}
