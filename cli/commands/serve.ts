// `serve`: the HTTP API over the published snapshot, until SIGINT or SIGTERM.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerServe(program: Command): void {
  withSettings(program.command('serve').description('serve the HTTP API over the published snapshot'), 'serve', 'warehouse').action(
    commandAction(() => import('../actions/serve.ts')),
  );
}
