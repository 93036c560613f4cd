// The `ingest-keys` commands' work: add (prints the key once), list, revoke.
import { z } from 'zod';
import { runtime, type CommandModule } from '../runtime.ts';
import { addIngestKey, IngestKeyError, listIngestKeys, revokeIngestKey } from '../../control/ingest-keys.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { UserError } from '../../lib/errors.ts';
import { table } from '../format.ts';
import type { SettingOverrides } from '../../lib/config.ts';
import { noFlags } from '../options.ts';

async function userErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof IngestKeyError) throw new UserError(err.message);
    throw err;
  }
}

/** `ingest-keys add --customer ID [--label TEXT]`. */
const AddFlags = z.object({
  customer: z.string(),
  label: z.string().trim().min(1, 'not empty').max(200, 'at most 200 characters').optional(),
});
export const add: CommandModule<typeof AddFlags> = {
  Flags: AddFlags,
  async run(flags, settings) {
    const rt = runtime(settings);
    const { key, record } = await userErrors(() => addIngestKey(warehouseLayout(rt.config.warehouseDir), { customer: flags.customer, label: flags.label ?? null }));
    process.stdout.write(`${key}\n`);
    process.stderr.write(`ingest key ${record.id} for customer ${record.customerId}: shown once, keep it in the player's configuration\n`);
  },
};

/** `ingest-keys list`. */
export const list: CommandModule<typeof noFlags> = { Flags: noFlags, run: listKeys };

async function listKeys(_flags: z.output<typeof noFlags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const keys = await listIngestKeys(warehouseLayout(rt.config.warehouseDir));
  if (keys.length === 0) {
    process.stdout.write('no ingest keys yet: add one with `ingest-keys add --customer ID`\n');
    return;
  }
  process.stdout.write(
    `${table(
      ['id', 'customer', 'key ends', 'label', 'created', 'revoked'],
      keys.map((k) => [k.id, k.customerId, `…${k.hint}`, k.label ?? '-', k.createdAt, k.revokedAt ?? '-']),
    )}\n`,
  );
}

/** `ingest-keys revoke KEY`: the key itself or its id. */
const RevokeFlags = z.object({ key: z.string().trim().min(1, 'the key or its id (ikey_…)') });
export const revoke: CommandModule<typeof RevokeFlags> = {
  Flags: RevokeFlags,
  async run(flags, settings) {
    const rt = runtime(settings);
    const revoked = await userErrors(() => revokeIngestKey(warehouseLayout(rt.config.warehouseDir), flags.key));
    process.stdout.write(`revoked ${revoked.id} (customer ${revoked.customerId}) at ${revoked.revokedAt}\n`);
  },
};
