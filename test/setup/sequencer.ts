// The order test files start in: the longest first, so that the run does not end on one of them
// while the other workers idle. Vitest orders by the durations of the last run on this machine
// when it has them (node_modules/.vite), and by file size otherwise, as on a fresh clone, where
// several of the longest files started last. The files below took longest in a run of the whole
// suite (three at a time, 2026-11-27; rebuild-after-deploy.test.ts, 95 s on 2026-11-28, added first), longest first; every other file keeps vitest's order, after
// them. A file missing from the list costs time, never a result.
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const LONGEST = [
  'test/warehouse/rebuild-after-deploy.test.ts',
  'test/portal/portal.test.ts',
  'test/jobs/live-schedule.test.ts',
  'test/warehouse/layer-merge.test.ts',
  'test/warehouse/breakdowns.test.ts',
  'test/warehouse/compaction.test.ts',
  'test/api/export-release.test.ts',
  'test/api/export-memory.test.ts',
  'test/api/breakdown.test.ts',
  'test/jobs/crash-recovery.test.ts',
  'test/alerts/worker-tier.test.ts',
  'test/warehouse/layered-state.test.ts',
  'test/jobs/schedule-keeper.test.ts',
  'test/pilot/render-browser.test.ts',
  'test/warehouse/incremental.test.ts',
  'test/api/abuse.test.ts',
  'test/api/serve-memory.test.ts',
  'test/jobs/worker-signals.test.ts',
  'test/cli/api-commands.test.ts',
  'test/cli/cli.test.ts',
  'test/collector/crash.test.ts',
  'test/cli/verify-report.test.ts',
  'test/api/snapshot-swap.test.ts',
  'test/cli/operator-mistakes.test.ts',
  'test/cli/start-restart.test.ts',
  'test/cli/reports-command.test.ts',
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
