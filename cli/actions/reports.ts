// The `reports` command's work: the same function as the nightly job, run inline, and what it wrote.
import path from 'node:path';
import { z } from 'zod';
import { runtime, withJobDeps } from '../runtime.ts';
import { progressBar } from '../progress.ts';
import { duration, int, table } from '../format.ts';
import { describeFailures, runReports, UnknownCustomerError, type ReportRunResult } from '../../jobs/pilot-reports/run.ts';
import { SnapshotUnreadableError } from '../../warehouse/snapshots/index.ts';
import { CUSTOMER_ID_PATTERN } from '../../warehouse/ids.ts';
import { EXIT, ExitError, UserError } from '../../lib/errors.ts';
import type { SettingOverrides } from '../../lib/config.ts';

const customerId = z.string().regex(CUSTOMER_ID_PATTERN, 'a customer id: 1–64 characters of [a-z0-9_-]');

export const Flags = z.object({ customer: z.array(customerId), force: z.boolean().optional() });

export async function run(flags: z.output<typeof Flags>, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings);
  const customers = flags.customer;
  const bar = progressBar('reports');
  let result: ReportRunResult;
  try {
    result = await withJobDeps(rt, (deps) =>
      runReports(
        deps,
        { asOf: new Date(), ...(customers.length > 0 ? { customers: [...new Set(customers)] } : {}), ...(flags.force ? { force: true } : {}) },
        (percent, step) => bar.update(percent, step),
      ),
    );
  } catch (err) {
    if (err instanceof UnknownCustomerError) throw new UserError(err.message);
    if (err instanceof SnapshotUnreadableError) {
      throw new ExitError(`the published snapshot cannot be read: ${err.message} (not the same as nothing published: repair it, or \`p2ptel snapshots use <id>\`)`, EXIT.failed);
    }
    throw err;
  } finally {
    bar.stop();
  }
  if (result.snapshot === null) throw new ExitError(`${result.message} (run \`p2ptel pipeline\` first)`, EXIT.nothingPublished);
  process.stdout.write(`${describeReports(result, rt.config.warehouseDir)}\n`);
  if (result.failed.length > 0) {
    throw new ExitError(`the other reports were published, but ${describeFailures(result.failed)}`, EXIT.partlyFailed);
  }
}

const plural = (n: number, noun: string) => `${int(n)} ${noun}${n === 1 ? '' : 's'}`;

export function describeReports(r: ReportRunResult, warehouseDir: string): string {
  if (r.snapshot === null) return r.message;
  const rows = r.publications.map((p) => [
    p.customerId,
    p.streams,
    p.skipped ? 'unchanged' : 'rendered',
    p.skipped ? '' : duration(Math.round(p.ms.figures + p.ms.render.json + p.ms.render.md + p.ms.render.html + p.ms.render.index + p.ms.write)),
    path.relative(path.resolve(warehouseDir), path.join(p.dir, 'index.html')),
  ]);
  return [
    `pilot reports of snapshot ${r.snapshot}: ${plural(r.reports, 'stream')} of ${plural(r.customers, 'customer')} (${r.rendered} rendered, ${r.unchanged} unchanged)`,
    '',
    table(['customer', 'streams', 'status', 'time', 'index page (in the warehouse)'], rows, new Set([1, 3])),
  ].join('\n');
}
