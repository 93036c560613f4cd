// The `tenants` commands' work: add a tenant (validated options), remove one, list tenants with their rates.
import { z } from 'zod';
import { parseOption, runtime } from '../runtime.ts';
import { addTenant, listTenants, removeTenant, TenantError } from '../../warehouse/control/tenants.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { CUSTOMER_ID_PATTERN } from '../../warehouse/ids.ts';
import { loadPlatformConfig } from '../../config/platform.ts';
import { UserError } from '../../lib/errors.ts';
import { table } from '../format.ts';

export interface TenantAddFlags {
  warehouse?: string;
  customer: string;
  name: string;
  cdnPricePerGb?: string;
  savingsSharePct?: string;
}

const customerId = z.string().regex(CUSTOMER_ID_PATTERN, '1–64 characters of a-z, 0-9, _ and -');
const price = z.coerce.number().nonnegative('0 or more').refine(Number.isFinite, 'a number');
const share = z.coerce.number().min(0, 'from 0 to 100').max(100, 'from 0 to 100');

export async function runTenantsAdd(flags: TenantAddFlags): Promise<void> {
  const rt = runtime(flags);
  const platform = loadPlatformConfig(rt.config.platformConfigFile);
  const input = {
    customerId: parseOption('customer', customerId, flags.customer),
    name: parseOption('name', z.string().trim().min(1, 'not empty').max(200, 'at most 200 characters'), flags.name),
    cdnPricePerGb: flags.cdnPricePerGb === undefined ? null : parseOption('cdn-price-per-gb', price, flags.cdnPricePerGb),
    savingsSharePct:
      flags.savingsSharePct === undefined ? platform.billing.defaultSavingsSharePct : parseOption('savings-share-pct', share, flags.savingsSharePct),
  };
  try {
    const tenant = await addTenant(warehouseLayout(rt.config.warehouseDir), input);
    process.stdout.write(`${tenant.id}\n`);
  } catch (err) {
    if (err instanceof TenantError) throw new UserError(err.message);
    throw err;
  }
}

export async function runTenantsList(flags: { warehouse?: string }): Promise<void> {
  const rt = runtime(flags);
  const platform = loadPlatformConfig(rt.config.platformConfigFile);
  const list = await listTenants(warehouseLayout(rt.config.warehouseDir));
  if (list.length === 0) {
    process.stdout.write('no tenants yet: add one with `tenants add --customer ID --name NAME`\n');
    return;
  }
  process.stdout.write(
    `${table(
      ['id', 'customer', 'name', 'CDN USD/GB', 'fee %', 'created'],
      list.map((t) => [
        t.id,
        t.customerId,
        t.name,
        t.cdnPricePerGb === null ? `${platform.billing.defaultCdnPricePerGb} (assumed)` : String(t.cdnPricePerGb),
        String(t.savingsSharePct),
        t.createdAt,
      ]),
    )}\n`,
  );
}

export async function runTenantsRemove(flags: { warehouse?: string; customer: string }): Promise<void> {
  const rt = runtime(flags);
  const removed = await removeTenant(warehouseLayout(rt.config.warehouseDir), flags.customer);
  if (!removed) throw new UserError(`no tenant for ${flags.customer}`);
  process.stdout.write(
    `removed ${removed.id} (customer ${removed.customerId}): its tokens (every API process) and its ingest keys (every collector) are refused within seconds; its data stays in the warehouse\n`,
  );
}
