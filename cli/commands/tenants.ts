// `tenants add` and `tenants list`: the tenants of the control area and their billing rates.
import type { Command } from 'commander';
import { z } from 'zod';
import { action, parseOption, runtime } from '../runtime.ts';
import { withWarehouse } from '../options.ts';
import { addTenant, listTenants, TenantError } from '../../warehouse/control/tenants.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { CUSTOMER_ID_PATTERN } from '../../warehouse/ids.ts';
import { loadPlatformConfig } from '../../config/platform.ts';
import { UserError } from '../../lib/errors.ts';
import { table } from '../format.ts';

const customerId = z.string().regex(CUSTOMER_ID_PATTERN, '1–64 characters of a-z, 0-9, _ and -');
const price = z.coerce.number().nonnegative('0 or more').refine(Number.isFinite, 'a number');
const share = z.coerce.number().min(0, 'from 0 to 100').max(100, 'from 0 to 100');

export function registerTenants(program: Command): void {
  const tenants = program.command('tenants').description('tenants (customers of the platform) and their billing rates');

  withWarehouse(
    tenants
      .command('add')
      .description('create a tenant; prints its id')
      .requiredOption('--customer <id>', 'customer id: the prefix of its stream ids')
      .requiredOption('--name <name>', 'display name')
      .option('--cdn-price-per-gb <usd>', 'CDN price in USD per GB (default: none on file; the platform default is assumed)')
      .option('--savings-share-pct <pct>', 'service fee as a percentage of the avoided CDN cost (default: the platform default)'),
  ).action(
    action(async (flags: { warehouse?: string; customer: string; name: string; cdnPricePerGb?: string; savingsSharePct?: string }) => {
      const rt = runtime(flags);
      const platform = loadPlatformConfig(rt.config.platformConfigFile);
      const input = {
        customerId: parseOption('customer', customerId, flags.customer),
        name: parseOption('name', z.string().trim().min(1, 'not empty').max(200, 'at most 200 characters'), flags.name),
        cdnPricePerGb: flags.cdnPricePerGb === undefined ? null : parseOption('cdn-price-per-gb', price, flags.cdnPricePerGb),
        savingsSharePct:
          flags.savingsSharePct === undefined
            ? platform.billing.defaultSavingsSharePct
            : parseOption('savings-share-pct', share, flags.savingsSharePct),
      };
      try {
        const tenant = await addTenant(warehouseLayout(rt.config.warehouseDir), input);
        process.stdout.write(`${tenant.id}\n`);
      } catch (err) {
        if (err instanceof TenantError) throw new UserError(err.message);
        throw err;
      }
    }),
  );

  withWarehouse(tenants.command('list').description('list tenants and their rates')).action(
    action(async (flags: { warehouse?: string }) => {
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
    }),
  );
}
