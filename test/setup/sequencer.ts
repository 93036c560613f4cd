// The order test files start in: the longest first, so that the run does not end on one of them
// while the other workers idle. Vitest orders by the durations of the last run on this machine
// when it has them (node_modules/.vite), and by file size otherwise, as on a fresh clone, where
// several of the longest files started last. The files below took 6 s or more in a run of the
// whole suite (three at a time, 2026-11-28, layer-merge and rebuild-after-deploy as made shorter
// that day), longest first; every other file keeps vitest's order, after them. A file missing from
// the list costs time, never a result.
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const LONGEST = [
  'test/portal/portal.test.ts',
  'test/warehouse/rebuild-after-deploy.test.ts',
  'test/jobs/live-schedule.test.ts',
  'test/warehouse/breakdowns.test.ts',
  'test/warehouse/compaction.test.ts',
  'test/warehouse/layer-merge.test.ts',
  'test/api/export-release.test.ts',
  'test/warehouse/summary-groups.test.ts',
  'test/collector/crash.test.ts',
  'test/alerts/worker-tier.test.ts',
  'test/jobs/crash-recovery.test.ts',
  'test/cli/start-restart.test.ts',
  'test/jobs/schedule-keeper.test.ts',
  'test/jobs/schedule.test.ts',
  'test/api/breakdown.test.ts',
  'test/cli/api-commands.test.ts',
  'test/cli/operator-mistakes.test.ts',
  'test/api/export-memory.test.ts',
  'test/alerts/start-outbox-crash.test.ts',
  'test/cli/verify-report.test.ts',
  'test/jobs/worker-signals.test.ts',
  'test/jobs/compaction-job.test.ts',
  'test/build/compiled.test.ts',
  'test/cli/cli.test.ts',
  'test/portal/alerts-pages.test.ts',
  'test/warehouse/layered-state.test.ts',
  'test/warehouse/incremental.test.ts',
  'test/api/published-reports.test.ts',
  'test/api/snapshot-swap.test.ts',
  'test/collector/spool-recovery.test.ts',
  'test/pilot/render-browser.test.ts',
  'test/alerts/alerts.test.ts',
  'test/cli/reports-command.test.ts',
  'test/api/serve-memory.test.ts',
  'test/api/abuse.test.ts',
  'test/warehouse/state-leases.test.ts',
  'test/api/pilot-reports.test.ts',
  'test/jobs/flow.test.ts',
  'test/warehouse/state-crash.test.ts',
  'test/collector/ingest-keys.test.ts',
  'test/collector/bad-input.test.ts',
  'test/jobs/crash-late-files.test.ts',
  'test/warehouse/snapshots.test.ts',
];

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification): number => {
      const i = LONGEST.indexOf(path.relative(f.project.config.root, f.moduleId).split(path.sep).join('/'));
      return i < 0 ? LONGEST.length : i;
    };
    return sorted
      .map((f, i) => ({ f, i, r: rank(f) }))
      .sort((a, b) => a.r - b.r || a.i - b.i)
      .map(({ f }) => f);
  }
}
