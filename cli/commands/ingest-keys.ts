// `ingest-keys add|list|revoke`: the public, write-only keys that players embed to post reports.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withWarehouse } from '../options.ts';

export function registerIngestKeys(program: Command): void {
  const keys = program.command('ingest-keys').description("ingest keys: public, write-only keys of a tenant's players (docs/sdk-ingest.md)");
  withWarehouse(
    keys
      .command('add')
      .description('make an ingest key for a tenant; prints the key once (only its hash is kept)')
      .requiredOption('--customer <id>', 'the tenant, by customer id or tenant id')
      .option('--label <text>', 'a note to tell keys apart (e.g. "web player")'),
  ).action(commandAction(async () => (await import('../actions/ingest-keys.ts')).add));
  withWarehouse(keys.command('list').description('list ingest keys (ids, customers, last characters, revoked or not)')).action(
    commandAction(async () => (await import('../actions/ingest-keys.ts')).list),
  );
  withWarehouse(keys.command('revoke').description('revoke an ingest key, given as the key or its id (ikey_…); collectors refuse it at once').argument('<key>')).action(
    commandAction(async () => (await import('../actions/ingest-keys.ts')).revoke, ['key']),
  );
}
