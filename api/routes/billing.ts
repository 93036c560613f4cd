// The billing routes (operator router, billing:read): summaries, daily usage, invoices and a
// customer's rates and current month. The figures are billing/accounts.ts's pure functions of the
// snapshot's daily series and the tenants; each body is serialised once per snapshot and tenants
// document, with an ETag, like the telemetry routes.
import { createHash } from 'node:crypto';
import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { problems } from '../../served/problems.ts';
import { snapshotOf } from '../request-context.ts';
import { sendSnapshotJson } from '../http-cache.ts';
import { parseQuery } from '../query.ts';
import { InvoicesQuery, PeriodQuery } from '../schemas/billing.ts';
import type { ApiDeps } from '../deps.ts';
import type { ServedSnapshot } from '../../served/snapshot-store.ts';
import { billingSummary, billingUsage, customerBilling, findCustomer, invoice, invoiceList, resolvePeriod, type Ledger } from '../../billing/accounts.ts';
import type { Period } from '../../billing/billing.ts';
import { listTenants, type Tenant } from '../../control/tenants.ts';
import { streamBelongsTo } from '../../warehouse/ids.ts';
import type { BucketRow } from '../../warehouse/figures/index.ts';

/**
 * A fingerprint of a control document (tenants, platform rates), part of every cache key: a change
 * of rates or tenants gives new bodies and ETags. The object is the same while its file is unchanged
 * (readDocumentCached), so it is hashed once per version.
 */
const fingerprints = new WeakMap<object, string>();
function fingerprintOf(document: object): string {
  let f = fingerprints.get(document);
  if (f === undefined) {
    f = createHash('sha1').update(JSON.stringify(document)).digest('base64url').slice(0, 16);
    fingerprints.set(document, f);
  }
  return f;
}

async function ledgerOf(deps: ApiDeps, snap: ServedSnapshot): Promise<{ ledger: Ledger; version: string }> {
  const tenants = await listTenants(deps.layout);
  // The ledger is pure and synchronous: every customer's daily series is read first (from the
  // snapshot's series files, through the bounded series cache).
  const daily = new Map<string, ReadonlyMap<string, readonly BucketRow[]>>();
  for (const p of snap.manifest.partitions) daily.set(p.customerId, await deps.series.daily(snap, p.customerId));
  const ledger: Ledger = {
    asOf: snap.manifest.asOf,
    asOfMs: snap.asOfMs,
    customerIds: snap.manifest.partitions.map((p) => p.customerId),
    tenants,
    defaults: deps.platform.billing,
    daily(customerId) {
      return [...(daily.get(customerId) ?? [])].filter(([streamId]) => streamBelongsTo(streamId, customerId));
    },
  };
  // The platform's default rates are part of the figures too: an edit gives new bodies at once.
  return { ledger, version: `${fingerprintOf(tenants)}.${fingerprintOf(deps.platform.billing)}` };
}

function periodOf(ctx: Context, snap: ServedSnapshot): Period {
  const p = resolvePeriod(parseQuery(ctx, PeriodQuery), snap.asOfMs);
  if ('error' in p) throw problems.invalidQuery('invalid_period', p.error, { parameter: p.parameter });
  return p;
}

const param = (ctx: Context, name: string) => String((ctx.params as Record<string, string>)[name]);

/** Registered on the operator router (routes/operator.ts: operators with billing:read). */
export function billingRoutes(router: Router, deps: ApiDeps): void {
  router.get('/billing/summary', async (ctx) => {
    const snap = snapshotOf(ctx);
    const period = periodOf(ctx, snap);
    const { ledger, version } = await ledgerOf(deps, snap);
    sendSnapshotJson(ctx, snap, `billing|summary|${version}|${period.from}|${period.to}`, () => billingSummary(ledger, period));
  });

  router.get('/billing/usage/:customerId', async (ctx) => {
    const snap = snapshotOf(ctx);
    const period = periodOf(ctx, snap);
    const { ledger, version } = await ledgerOf(deps, snap);
    const c = findCustomer(ledger, param(ctx, 'customerId'));
    if (!c) throw problems.customerNotFound();
    sendSnapshotJson(ctx, snap, `billing|usage|${version}|${c.customerId}|${period.from}|${period.to}`, () => billingUsage(ledger, c, period));
  });

  router.get('/billing/invoices', async (ctx) => {
    const snap = snapshotOf(ctx);
    const { customerId } = parseQuery(ctx, InvoicesQuery);
    const { ledger, version } = await ledgerOf(deps, snap);
    // The customer filter is free text: JSON-encoded in the key, it cannot collide with another.
    sendSnapshotJson(ctx, snap, `billing|invoices|${version}|${JSON.stringify(customerId ?? null)}`, () => invoiceList(ledger, customerId));
  });

  router.get('/billing/invoices/:id', async (ctx) => {
    const snap = snapshotOf(ctx);
    const { ledger, version } = await ledgerOf(deps, snap);
    const id = param(ctx, 'id');
    const key = `billing|invoice|${version}|${id}`;
    // Only an invoice that exists gets a body: unknown ids cannot fill the cache.
    if (!snap.responses.has(key) && invoice(ledger, id) === null) throw problems.invoiceNotFound();
    sendSnapshotJson(ctx, snap, key, () => invoice(ledger, id));
  });

  router.get('/billing/customers/:customerId', async (ctx) => {
    const snap = snapshotOf(ctx);
    const { ledger, version } = await ledgerOf(deps, snap);
    const c = findCustomer(ledger, param(ctx, 'customerId'));
    if (!c) throw problems.customerNotFound();
    sendSnapshotJson(ctx, snap, `billing|customer|${version}|${c.customerId}`, () => customerBilling(ledger, c));
  });
}
