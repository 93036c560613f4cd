// `token`: issue a signed API token for a tenant or an operator; prints the token and nothing else.
import type { Command } from 'commander';
import { action, runtime } from '../runtime.ts';
import { withWarehouse } from '../options.ts';
import { findTenant } from '../../warehouse/control/tenants.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { issueToken, parseTtl, tokenSecret, TokenError } from '../../api/tokens.ts';
import { UserError } from '../../lib/errors.ts';

export function registerToken(program: Command): void {
  withWarehouse(
    program
      .command('token')
      .description('issue a signed API token (printed once, on stdout)')
      .option('--customer <id>', 'the tenant, by customer id or tenant id (for a tenant token)')
      .option('--role <role>', 'tenant or operator', 'tenant')
      .option('--ttl <lifetime>', 'lifetime, e.g. 30d, 12h, 90m (default: 30d for a tenant, 1d for an operator)'),
  ).action(
    action(async (flags: { warehouse?: string; customer?: string; role: string; ttl?: string }) => {
      const rt = runtime(flags);
      const layout = warehouseLayout(rt.config.warehouseDir);
      if (flags.role !== 'tenant' && flags.role !== 'operator') throw new UserError('--role: tenant or operator');
      let ttl: number;
      try {
        ttl = parseTtl(flags.ttl ?? (flags.role === 'operator' ? '1d' : '30d'));
      } catch (err) {
        if (err instanceof TokenError) throw new UserError(`--ttl: ${err.message}`);
        throw err;
      }
      const secret = await tokenSecret(layout, rt.config.tokenSecret);
      if (flags.role === 'operator') {
        if (flags.customer !== undefined) throw new UserError('an operator token is not tied to a customer: drop --customer');
        process.stdout.write(`${await issueToken(secret, { role: 'operator' }, ttl)}\n`);
        return;
      }
      if (flags.customer === undefined) throw new UserError('--customer is required for a tenant token');
      const tenant = await findTenant(layout, flags.customer);
      if (!tenant) throw new UserError(`no tenant for ${flags.customer}: create it with \`tenants add --customer ${flags.customer} --name NAME\``);
      process.stdout.write(`${await issueToken(secret, { role: 'tenant', tenant }, ttl)}\n`);
    }),
  );
}
