// `start` (npm start): the main job end to end on embedded defaults — sample data when the
// warehouse is empty, one pipeline run, and a summary table of the streams.
import type { Command } from 'commander';
import { action, progressBar, runtime, withJobDeps } from '../runtime.ts';
import { withWarehouse } from '../options.ts';
import { discoverLanding } from '../../warehouse/landing.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { currentSnapshot, readStreamSummaries } from '../../warehouse/snapshot-read.ts';
import { DEFAULT_CUSTOMERS, describeGeneration } from './generate.ts';
import { describeRun } from './pipeline.ts';
import { bytes, percent, table } from '../format.ts';

export function registerStart(program: Command): void {
  withWarehouse(
    program.command('start').description('sample data if the warehouse is empty, one pipeline run, and a summary of the streams'),
  ).action(
    action(async (flags: { warehouse?: string }) => {
      const rt = runtime(flags);
      await withJobDeps(rt, async (deps) => {
        const out = (s: string) => process.stdout.write(`${s}\n`);
        out(`warehouse: ${deps.layout.root}`);
        const { files } = await discoverLanding(deps.layout);
        if (files.length === 0) {
          const bar = progressBar('sample data');
          const started = Date.now();
          const now = Math.floor(Date.now() / 1000) * 1000;
          const gen = await generateReports(
            deps.db,
            deps.layout,
            { customers: DEFAULT_CUSTOMERS, streams: 3, sessions: 400, start: new Date(now - 6 * 3_600_000), hours: 6, seed: 1 },
            (p, step) => bar.update(p, step),
          ).finally(() => bar.stop());
          out(await describeGeneration(gen, Date.now() - started));
        } else {
          out(`landing area holds ${files.length} files: no sample data generated`);
        }
        const bar = progressBar('pipeline');
        const run = await runPipeline(deps, { asOf: new Date() }, (p) => bar.update((100 * p.done) / p.total, p.step)).finally(() =>
          bar.stop(),
        );
        out(describeRun(run));
        const snap = await currentSnapshot(deps.layout);
        if (!snap) return;
        const rows = await readStreamSummaries(deps.db, snap, '24h');
        out('\nstreams, last 24 hours:');
        out(
          table(
            ['stream', 'sessions', 'from peers', 'from CDN', 'offload', 'peers/session', 'active', 'live', 'last seen'],
            rows.map((r) => [
              r.streamId,
              r.totalSessions,
              bytes(r.totalBytesOffloaded),
              bytes(r.totalBytesFallback),
              percent(r.avgOffloadRatio),
              r.avgPeerCount.toFixed(2),
              r.activePeers,
              r.live ? 'yes' : 'no',
              r.lastSeenAt?.toISOString() ?? '-',
            ]),
            new Set([1, 2, 3, 4, 5, 6]),
          ),
        );
      });
    }),
  );
}
