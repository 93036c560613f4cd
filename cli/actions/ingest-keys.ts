// The `ingest-keys` commands' work: add (prints the key once), list, revoke.
import { z } from 'zod';
import { parseOption, runtime } from '../runtime.ts';
import { addIngestKey, IngestKeyError, listIngestKeys, revokeIngestKey } from '../../warehouse/control/ingest-keys.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { UserError } from '../../lib/errors.ts';
import { table } from '../format.ts';

export interface IngestKeyAddFlags {
  warehouse?: string;
  customer: string;
  label?: string;
}

async function userErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof IngestKeyError) throw new UserError(err.message);
    throw err;
  }
}

export async function runIngestKeysAdd(flags: IngestKeyAddFlags): Promise<void> {
  const rt = runtime(flags);
  const label = flags.label === undefined ? null : parseOption('label', z.string().trim().min(1, 'not empty').max(200, 'at most 200 characters'), flags.label);
  const { key, record } = await userErrors(() => addIngestKey(warehouseLayout(rt.config.warehouseDir), { customer: flags.customer, label }));
  process.stdout.write(`${key}\n`);
  process.stderr.write(`ingest key ${record.id} for customer ${record.customerId}: shown once, keep it in the player's configuration\n`);
}

export async function runIngestKeysList(flags: { warehouse?: string }): Promise<void> {
  const rt = runtime(flags);
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

export async function runIngestKeysRevoke(key: string, flags: { warehouse?: string }): Promise<void> {
  const rt = runtime(flags);
  const revoked = await userErrors(() => revokeIngestKey(warehouseLayout(rt.config.warehouseDir), key.trim()));
  process.stdout.write(`revoked ${revoked.id} (customer ${revoked.customerId}) at ${revoked.revokedAt}\n`);
}
