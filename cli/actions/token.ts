// The `token` commands' work: check the request, sign the token, print it alone (its id on
// stderr); revoke a token by putting its id on the control area's deny list.
import { z } from 'zod';
import { runtime, type CommandModule } from '../runtime.ts';
import { findTenant } from '../../control/tenants.ts';
import { revokeTokenId } from '../../control/revocation.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { issueToken, MAX_TOKEN_LIFETIME_SECONDS, parseTtl, tokenIdentity, tokenSecret, TokenError } from '../../api/tokens.ts';
import { UserError } from '../../lib/errors.ts';
import type { SettingOverrides } from '../../lib/config.ts';

/** `token [--customer ID] [--role tenant|operator] [--ttl LIFETIME]` (the lifetime is checked against the role's maximum). */
export const Flags = z.object({
  customer: z.string().optional(),
  role: z.enum(['tenant', 'operator'], 'tenant or operator'),
  ttl: z.string().optional(),
});

export async function run(flags: z.output<typeof Flags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const layout = warehouseLayout(rt.config.warehouseDir);
  const lifetimes = rt.config.tokens[flags.role];
  let ttl: number;
  try {
    ttl = parseTtl(flags.ttl ?? lifetimes.defaultTtl, lifetimes.maxTtl);
  } catch (err) {
    if (err instanceof TokenError) throw new UserError(`--ttl: ${err.message}`);
    throw err;
  }
  let token: string;
  if (flags.role === 'operator') {
    if (flags.customer !== undefined) throw new UserError('an operator token is not tied to a customer: drop --customer');
    token = await issueToken(await tokenSecret(layout, rt.config.tokenSecret), { role: 'operator' }, ttl);
  } else {
    if (flags.customer === undefined) throw new UserError('--customer is required for a tenant token');
    const tenant = await findTenant(layout, flags.customer);
    if (!tenant) throw new UserError(`no tenant for ${flags.customer}: create it with \`tenants add --customer ${flags.customer} --name NAME\``);
    token = await issueToken(await tokenSecret(layout, rt.config.tokenSecret), { role: 'tenant', tenant }, ttl);
  }
  process.stdout.write(`${token}\n`);
  const identity = await tokenIdentity(await tokenSecret(layout, rt.config.tokenSecret), token);
  process.stderr.write(`token id ${identity!.tokenId}, expires ${new Date(identity!.expiresAt * 1000).toISOString()} (revoke with \`token revoke ${identity!.tokenId}\`)\n`);
}

const TOKEN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `token revoke <token>`: the token itself or its id. */
const RevokeFlags = z.object({ token: z.string().trim().min(1, 'the token or its id') });
export const revoke: CommandModule<typeof RevokeFlags> = { Flags: RevokeFlags, run: revokeCommand };

async function revokeCommand(flags: z.output<typeof RevokeFlags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const value = flags.token;
  const layout = warehouseLayout(rt.config.warehouseDir);
  const now = Math.floor(Date.now() / 1000);
  let tokenId: string;
  let expiresAt: number;
  if (TOKEN_ID.test(value)) {
    // An id alone does not say when its token expires: keep it as long as any token can live.
    tokenId = value.toLowerCase();
    expiresAt = now + MAX_TOKEN_LIFETIME_SECONDS;
  } else {
    const identity = await tokenIdentity(await tokenSecret(layout, rt.config.tokenSecret), value.trim());
    if (!identity) throw new UserError('not a token of this warehouse (its signature does not verify) nor a token id');
    if (identity.expired) {
      process.stdout.write(`token ${identity.tokenId} has expired already: nothing to revoke\n`);
      return;
    }
    ({ tokenId, expiresAt } = identity);
  }
  const { already } = await revokeTokenId(layout, tokenId, expiresAt, now);
  process.stdout.write(
    `${already ? 'already revoked' : 'revoked'}: token ${tokenId} is refused by every API process within seconds (listed until ${new Date(expiresAt * 1000).toISOString()})\n`,
  );
}
