// `collect`: a collector of SDK session reports (POST /v1/session-reports), until SIGINT or SIGTERM,
// which land everything spooled before exiting. Run several, each with its own spool folder.
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerCollect(program: Command): void {
  const collect = program.command('collect').description('collect session reports posted by the SDK and land them as Parquet (logs on stderr)');
  withSettings(collect, 'collect', 'warehouse').action(commandAction(() => import('../actions/collect.ts')));
}
