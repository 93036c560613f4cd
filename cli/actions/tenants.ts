// The `tenants` commands' work: add a tenant (validated options), remove one, list tenants with their rates.
import { z } from 'zod';
import { runtime, type CommandModule } from '../runtime.ts';
import { addTenant, listTenants, removeTenant, TenantError } from '../../control/tenants.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { CUSTOMER_ID_PATTERN } from '../../warehouse/ids.ts';
import { loadPlatformConfig } from '../../config/platform.ts';
import { UserError } from '../../lib/errors.ts';
import { table } from '../format.ts';
import type { SettingOverrides } from '../../lib/config.ts';
import { noFlags } from '../options.ts';
const customerId = z.string().regex(CUSTOMER_ID_PATTERN, '1–64 characters of a-z, 0-9, _ and -');
const price = z.coerce.number().nonnegative('0 or more').refine(Number.isFinite, 'a number');
const share = z.coerce.number().min(0, 'from 0 to 100').max(100, 'from 0 to 100');

/** `tenants add --customer ID --name NAME [--cdn-price-per-gb USD] [--savings-share-pct PCT]`. */
const AddFlags = z.object({
  customer: customerId,
  name: z.string().trim().min(1, 'not empty').max(200, 'at most 200 characters'),
  cdnPricePerGb: price.optional(),
  savingsSharePct: share.optional(),
});
export const add: CommandModule<typeof AddFlags> = { Flags: AddFlags, run: addCommand };

async function addCommand(flags: z.output<typeof AddFlags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const platform = loadPlatformConfig(rt.config.platformConfigFile);
  const input = {
    customerId: flags.customer,
    name: flags.name,
    cdnPricePerGb: flags.cdnPricePerGb ?? null,
    savingsSharePct: flags.savingsSharePct ?? platform.billing.defaultSavingsSharePct,
  };
  try {
    const tenant = await addTenant(warehouseLayout(rt.config.warehouseDir), input);
    process.stdout.write(`${tenant.id}\n`);
  } catch (err) {
    if (err instanceof TenantError) throw new UserError(err.message);
    throw err;
  }
}

/** `tenants list`. */
export const list: CommandModule<typeof noFlags> = { Flags: noFlags, run: listCommand };

async function listCommand(_flags: z.output<typeof noFlags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
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

/** `tenants remove --customer ID` (a customer id or a tenant id). */
const RemoveFlags = z.object({ customer: z.string() });
export const remove: CommandModule<typeof RemoveFlags> = { Flags: RemoveFlags, run: removeCommand };

async function removeCommand(flags: z.output<typeof RemoveFlags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const removed = await removeTenant(warehouseLayout(rt.config.warehouseDir), flags.customer);
  if (!removed) throw new UserError(`no tenant for ${flags.customer}`);
  process.stdout.write(
    `removed ${removed.id} (customer ${removed.customerId}): its tokens (every API process) and its ingest keys (every collector) are refused within seconds; its data stays in the warehouse\n`,
  );
}
