// `verify-report`: check a pilot report's signed statement (signature and every file's SHA-256)
// against the platform's JWK Set.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerVerifyReport(program: Command): void {
  withSettings(
    program
      .command('verify-report')
      .description(
        "check a pilot report's signed statement: the signature against the JWK Set, and the SHA-256 of each of its files; exits 7 naming what differs (docs/pilot-reports.md)",
      )
      .argument('<path>', 'a report file (.json, .md, .html), its statement (.jws), or a folder of them (a customer\'s static site)')
      .option('--jwks <url-or-file>', "the JWK Set: an https:// URL (the API's /.well-known/jwks.json) or a file; default: the keys of the warehouse's control area"),
    'warehouse',
  ).action(commandAction(() => import('../actions/verify-report.ts'), ['path']));
}
