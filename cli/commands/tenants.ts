// `tenants add`, `tenants remove` and `tenants list`: the tenants of the control area and their billing rates.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerTenants(program: Command): void {
  const tenants = program.command('tenants').description('tenants (customers of the platform) and their billing rates');
  withSettings(
    tenants
      .command('add')
      .description('create a tenant; prints its id')
      .requiredOption('--customer <id>', 'customer id: the prefix of its stream ids')
      .requiredOption('--name <name>', 'display name')
      .option('--cdn-price-per-gb <usd>', 'CDN price in USD per GB (default: none on file; the platform default is assumed)')
      .option('--savings-share-pct <pct>', 'service fee as a percentage of the avoided CDN cost (default: the platform default)'),
    'warehouse',
  ).action(commandAction(async () => (await import('../actions/tenants.ts')).add));
  withSettings(
    tenants
      .command('remove')
      .description('remove a tenant: its tokens (and ingest keys) are refused from then on by every process, its origins list is deleted')
      .requiredOption('--customer <id>', 'the tenant, by customer id or tenant id'),
    'warehouse',
  ).action(commandAction(async () => (await import('../actions/tenants.ts')).remove));
  withSettings(tenants.command('list').description('list tenants and their rates'), 'warehouse').action(
    commandAction(async () => (await import('../actions/tenants.ts')).list),
  );
}
