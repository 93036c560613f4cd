// `keys rotate|list`: the report-signing keys (the JWK Set at /.well-known/jwks.json).
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('the keys that sign pilot-report statements (docs/pilot-reports.md, "Signatures")');
  withSettings(
    keys
      .command('rotate')
      .description('retire the current report-signing key (its public half stays published for REPORT_KEY_RETENTION_DAYS) and make a new one that signs from now on'),
    'warehouse',
  ).action(commandAction(async () => (await import('../actions/keys.ts')).rotate));
  withSettings(keys.command('list').description('the report-signing keys: id, made, retired, published until'), 'warehouse').action(
    commandAction(async () => (await import('../actions/keys.ts')).list),
  );
}
