// The nightly report run. A placeholder until the pilot-report issue fills it in: the queue, the
// schedule and the worker are wired now, so that issue only has to replace this function.
import type { JobDeps } from '../deps.ts';

export interface ReportRunResult {
  asOf: string;
  implemented: false;
  message: string;
}

export const REPORTS_NOT_IMPLEMENTED = 'pilot reports are not implemented yet: this run did nothing';

export async function runReports(deps: JobDeps, input: { asOf: Date }): Promise<ReportRunResult> {
  deps.log.info({ asOf: input.asOf.toISOString() }, REPORTS_NOT_IMPLEMENTED);
  return { asOf: input.asOf.toISOString(), implemented: false, message: REPORTS_NOT_IMPLEMENTED };
}
