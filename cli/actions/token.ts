// The `token` command's work: check the request, sign the token, print it alone.
import { runtime } from '../runtime.ts';
import { findTenant } from '../../warehouse/control/tenants.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { issueToken, parseTtl, tokenSecret, TokenError } from '../../api/tokens.ts';
import { UserError } from '../../lib/errors.ts';
import type { TokenFlags } from '../commands/token.ts';

export async function runToken(flags: TokenFlags): Promise<void> {
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
  if (flags.role === 'operator') {
    if (flags.customer !== undefined) throw new UserError('an operator token is not tied to a customer: drop --customer');
    const secret = await tokenSecret(layout, rt.config.tokenSecret);
    process.stdout.write(`${await issueToken(secret, { role: 'operator' }, ttl)}\n`);
    return;
  }
  if (flags.customer === undefined) throw new UserError('--customer is required for a tenant token');
  const tenant = await findTenant(layout, flags.customer);
  if (!tenant) throw new UserError(`no tenant for ${flags.customer}: create it with \`tenants add --customer ${flags.customer} --name NAME\``);
  const secret = await tokenSecret(layout, rt.config.tokenSecret);
  process.stdout.write(`${await issueToken(secret, { role: 'tenant', tenant }, ttl)}\n`);
}
