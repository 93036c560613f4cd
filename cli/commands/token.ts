// `token`: issue a signed API token for a tenant or an operator; prints the token and nothing else.
import type { Command } from 'commander';
import { action } from '../runtime.ts';
import { withWarehouse } from '../options.ts';

export interface TokenFlags {
  warehouse?: string;
  customer?: string;
  role: string;
  ttl?: string;
}

export function registerToken(program: Command): void {
  withWarehouse(
    program
      .command('token')
      .description('issue a signed API token (printed once, on stdout)')
      .option('--customer <id>', 'the tenant, by customer id or tenant id (for a tenant token)')
      .option('--role <role>', 'tenant or operator', 'tenant')
      .option('--ttl <lifetime>', 'lifetime, e.g. 30d, 12h, 90m (default: 30d for a tenant, 1d for an operator)'),
  ).action(action(async (flags: TokenFlags) => (await import('../actions/token.ts')).runToken(flags)));
}
