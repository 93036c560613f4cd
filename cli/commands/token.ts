// `token`: issue a signed API token for a tenant or an operator; prints the token and nothing else
// on stdout (its id on stderr). `token revoke`: refuse a token from now on, in every process.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerToken(program: Command): void {
  const token = withSettings(
    program
      .command('token')
      .description('issue a signed API token (printed once, on stdout; its id on stderr)')
      .option('--customer <id>', 'the tenant, by customer id or tenant id (for a tenant token)')
      .option('--role <role>', 'tenant or operator', 'tenant')
      .option(
        '--ttl <lifetime>',
        'lifetime, e.g. 30d, 12h, 90m (default: 30d for a tenant, 1d for an operator; at most 90d and 30d: TOKEN_*_TTL_DEFAULT / _MAX)',
      )
      .addHelpText(
        'after',
        [
          '',
          'Revoking:',
          '  p2ptel token revoke <token | token id>   refuse one token from now on (every API process within seconds)',
          '  p2ptel tenants remove --customer ID      refuse every token of a tenant, and drop its origins list',
        ].join('\n'),
      ),
    'warehouse',
  ).action(commandAction(() => import('../actions/token.ts')));
  withSettings(
    token
      .command('revoke')
      .description('revoke a token: put its id on the deny list of the control area until it would have expired')
      .argument('<token>', 'the token itself, or its id (printed on stderr when it was issued)'),
    // --warehouse may be parsed by `token` itself (it has the option too): commandAction takes it from either.
    'warehouse',
  ).action(commandAction(async () => (await import('../actions/token.ts')).revoke, ['token']));
}
