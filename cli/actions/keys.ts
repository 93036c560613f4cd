// The `keys` commands' work: rotate the report-signing key, list the keys (never a private member).
import type { z } from 'zod';
import { runtime, type CommandModule } from '../runtime.ts';
import { noFlags } from '../options.ts';
import { table } from '../format.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { listReportKeys, rotateReportKey } from '../../control/report-keys.ts';
import type { SettingOverrides } from '../../lib/config.ts';

/** `keys rotate`. */
export const rotate: CommandModule<typeof noFlags> = { Flags: noFlags, run: rotateKey };

async function rotateKey(_flags: z.output<typeof noFlags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const r = await rotateReportKey(warehouseLayout(rt.config.warehouseDir), rt.config.reportKeys.retentionMs);
  const days = rt.config.reportKeys.retentionMs / 86_400_000;
  process.stdout.write(`${r.current}\n`);
  process.stderr.write(
    [
      `report-signing key ${r.current} signs from now on`,
      r.retired ? `; ${r.retired} is retired and stays in /.well-known/jwks.json for ${days} days` : '',
      r.dropped.length > 0 ? `; removed ${r.dropped.length} key(s) retired more than ${days} days ago: ${r.dropped.join(', ')}` : '',
      '\n',
    ].join(''),
  );
}

/** `keys list`. */
export const list: CommandModule<typeof noFlags> = { Flags: noFlags, run: listKeys };

async function listKeys(_flags: z.output<typeof noFlags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const keys = await listReportKeys(warehouseLayout(rt.config.warehouseDir), rt.config.reportKeys.retentionMs);
  if (keys.length === 0) {
    process.stdout.write('no report-signing key yet: the first report run, the API or `keys rotate` makes one\n');
    return;
  }
  const rows = keys.map((k) => [k.kid, k.state, k.createdAt, k.retiredAt ?? '-', k.publishedUntil ?? '-']);
  process.stdout.write(`${table(['kid', 'state', 'made', 'retired', 'published until'], rows)}\n`);
}
