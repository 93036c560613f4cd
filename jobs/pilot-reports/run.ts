// The nightly report run: every customer's pilot reports of the current snapshot, pre-rendered in
// the three formats into the snapshot's report folder (pilot/publish.ts). The BullMQ worker and
// `cli reports` both call this function.
import type { JobDeps } from '../deps.ts';
import { platformConfigReader } from '../../config/platform.ts';
import { currentSnapshot } from '../../warehouse/snapshots/index.ts';
import { cleanReportLeftovers, customersWithData, publishSnapshotReports, type CustomerPublication, type ReportFailure } from '../../pilot/publish.ts';
import { cleanDebris } from '../../warehouse/snapshots/index.ts';
import { reconcilePublication } from '../../warehouse/publish/index.ts';
import { InternalError } from '../../lib/errors.ts';

export interface ReportRunResult {
  asOf: string;
  /** The snapshot rendered; null when none is published yet. */
  snapshot: string | null;
  customers: number;
  /** Customers whose folder was (re)written, and those that already held these reports. */
  rendered: number;
  unchanged: number;
  /** Stream reports in the snapshot's folders (each in json, md and html). */
  reports: number;
  message: string;
  publications: CustomerPublication[];
  /** Streams and customers that could not be rendered (logged; the others were published). */
  failed: ReportFailure[];
}

export class UnknownCustomerError extends InternalError {
  override name = 'UnknownCustomerError';
  override readonly errorCode = 'unknown_customer';
}

export async function runReports(
  deps: JobDeps,
  input: { asOf: Date; customers?: readonly string[]; force?: boolean },
  onProgress?: (percent: number, step: string) => void | Promise<void>,
): Promise<ReportRunResult> {
  const asOf = input.asOf.toISOString();
  // What earlier runs left: scratch folders of dead processes, folders moved aside, and a catalog
  // that a publisher killed midway left behind CURRENT.
  await cleanDebris(deps.layout, deps.config.snapshots.debrisGraceMs, deps.log);
  for (const p of await cleanReportLeftovers(deps.layout)) deps.log.info({ path: p }, 'removed a report folder left aside by a dead run');
  await reconcilePublication(deps.db, deps.layout, deps.config.snapshots.lockStaleMs, deps.log);
  // A damaged CURRENT or manifest throws SnapshotUnreadableError, naming the file.
  const snap = await currentSnapshot(deps.layout);
  if (!snap) {
    const message = 'no snapshot is published yet: nothing to render';
    deps.log.warn({ asOf }, message);
    return { asOf, snapshot: null, customers: 0, rendered: 0, unchanged: 0, reports: 0, message, publications: [], failed: [] };
  }
  const id = snap.manifest.snapshot;
  if (input.customers) {
    const present = new Set(customersWithData(snap.manifest));
    const missing = input.customers.filter((c) => !present.has(c));
    if (missing.length > 0) throw new UnknownCustomerError(`no data for ${missing.join(', ')} in snapshot ${id}: nothing to render for ${missing.length === 1 ? 'it' : 'them'}`);
  }
  // The same stat-checked reader as the API's: an edit applies to the next run of a long-lived
  // worker, and both processes compute the same inputs fingerprint from the same document.
  const platform = platformConfigReader(deps.config.platformConfigFile, (err) =>
    deps.log.error({ err: err.message }, 'the platform configuration is invalid; keeping the last good one'),
  ).current();
  const started = Date.now();
  const result = await publishSnapshotReports(
    { db: deps.db, layout: deps.layout, platform },
    { id, manifest: snap.manifest },
    {
      ...(input.customers ? { customers: input.customers } : {}),
      ...(input.force === undefined ? {} : { force: input.force }),
      onCustomer: async (done, i, total) => {
        deps.log.info({ snapshot: id, customerId: done.customerId, streams: done.streams, skipped: done.skipped }, done.skipped ? 'pilot reports unchanged' : 'pilot reports rendered');
        await onProgress?.((100 * (i + 1)) / total, `${i + 1}/${total} customers`);
      },
      onFailure: (f) => deps.log.error({ snapshot: id, customerId: f.customerId, streamId: f.streamId, reason: f.reason }, 'pilot report not rendered; going on with the others'),
    },
  );
  const rendered = result.customers.filter((c) => !c.skipped).length;
  const reports = result.customers.reduce((n, c) => n + c.streams, 0);
  const customers = result.customers.length;
  const message =
    `${reports} report${reports === 1 ? '' : 's'} of ${customers} customer${customers === 1 ? '' : 's'} for snapshot ${id}` +
    ` (${rendered} rendered, ${customers - rendered} unchanged) in ${((Date.now() - started) / 1000).toFixed(1)} s` +
    (result.failed.length > 0 ? `; ${describeFailures(result.failed)}` : '');
  return { asOf, snapshot: id, customers, rendered, unchanged: customers - rendered, reports, message, publications: result.customers, failed: result.failed };
}

/** One line: what could not be rendered and why. */
export function describeFailures(failed: readonly ReportFailure[]): string {
  const items = failed.map((f) => `${f.streamId ?? `customer ${f.customerId}`}: ${f.reason}`);
  return `${failed.length} not rendered (${items.slice(0, 5).join('; ')}${items.length > 5 ? `; and ${items.length - 5} more` : ''})`;
}
