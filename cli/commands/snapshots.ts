// `snapshots list|use`: what is published, and the way back from a snapshot published with a
// wrong asOf (point CURRENT at an earlier one; the catalog follows).
import type { Command } from 'commander';
import { commandAction } from '../runtime.ts';
import { withSettings } from '../options.ts';

export function registerSnapshots(program: Command): void {
  const snapshots = program.command('snapshots').description('list the published snapshots, or make an earlier one current');
  withSettings(snapshots.command('list').description('the snapshot folders with their asOf, the current one marked'), 'warehouse').action(
    commandAction(async () => (await import('../actions/snapshots.ts')).list),
  );
  withSettings(
    snapshots
      .command('use')
      .description('point CURRENT at a published snapshot (e.g. to go back from one with a wrong asOf); the API and the catalog follow')
      .argument('<id>', 'a snapshot id, as `snapshots list` prints it'),
    'warehouse',
  ).action(commandAction(async () => (await import('../actions/snapshots.ts')).use, ['id']));
}
