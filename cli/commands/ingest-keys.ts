// `ingest-keys add|list|revoke`: the public, write-only keys that players embed to post reports.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerIngestKeys(program: Command): void {
  const keys = program.command('ingest-keys').description("ingest keys: public, write-only keys of a tenant's players (docs/sdk-ingest.md)");
  withSettings(
    keys
      .command('add')
      .description('make an ingest key for a tenant; prints the key once (only its hash is kept)')
      .requiredOption('--customer <id>', 'the tenant, by customer id or tenant id')
      .option('--label <text>', 'a note to tell keys apart (e.g. "web player")'),
    'warehouse',
  ).action(commandAction(async () => (await import('../actions/ingest-keys.ts')).add));
  withSettings(keys.command('list').description('list ingest keys (ids, customers, last characters, revoked or not)'), 'warehouse').action(
    commandAction(async () => (await import('../actions/ingest-keys.ts')).list),
  );
  withSettings(
    keys.command('revoke').description('revoke an ingest key, given as the key or its id (ikey_…); collectors refuse it at once').argument('<key>'),
    'warehouse',
  ).action(commandAction(async () => (await import('../actions/ingest-keys.ts')).revoke, ['key']));
}
