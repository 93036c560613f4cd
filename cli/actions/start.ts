// The `start` command's work: sample data, a pipeline run, a summary, a tenant, a token, the API.
import { progressBar, runtime, withJobDeps } from '../runtime.ts';
import { createLogger } from '../../lib/log.ts';
import { startApi } from '../../api/server.ts';
import { issueToken, tokenSecret } from '../../api/tokens.ts';
import { addTenant, findTenant } from '../../warehouse/control/tenants.ts';
import { loadPlatformConfig } from '../../config/platform.ts';
import { discoverLanding } from '../../warehouse/landing.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { currentSnapshot, readStreamSummaries } from '../../warehouse/snapshot-read.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { DEFAULT_CUSTOMERS, describeGeneration } from './generate.ts';
import { describeRun } from './pipeline.ts';
import { closeOnSignals, serveConfig } from './serve.ts';
import { bytes, percent, table } from '../format.ts';
import type { ServeFlags } from '../commands/serve.ts';

export async function runStart(flags: ServeFlags): Promise<void> {
  const rt = runtime(flags);
  const config = serveConfig(flags, 'warn');
  const example = await withJobDeps(rt, async (deps) => {
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
    if (!snap) return null;
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
    const streamId = rows[0]?.streamId ?? snap.manifest.partitions[0]?.customerId;
    return streamId ? { customerId: streamId.split(':')[0]!, streamId } : null;
  });
  if (!example) {
    process.stdout.write('\nno stream reported anything: nothing to serve yet\n');
    return;
  }

  // A tenant for the first customer (created once) and a token to try the API with.
  const layout = warehouseLayout(rt.config.warehouseDir);
  const platform = loadPlatformConfig(rt.config.platformConfigFile);
  const tenant =
    (await findTenant(layout, example.customerId)) ??
    (await addTenant(layout, {
      customerId: example.customerId,
      name: `${example.customerId} (sample)`,
      cdnPricePerGb: null,
      savingsSharePct: platform.billing.defaultSavingsSharePct,
    }));
  const token = await issueToken(await tokenSecret(layout, rt.config.tokenSecret), { role: 'tenant', tenant }, 30 * 86_400);

  const api = await startApi(config, createLogger(config.logLevel, 'p2ptel-api'));
  const auth = `-H "Authorization: Bearer ${token}"`;
  process.stdout.write(
    [
      '',
      `API listening on ${api.url} (Ctrl-C to stop)`,
      `tenant ${tenant.id} (customer ${tenant.customerId}); its token, valid 30 days:`,
      token,
      '',
      'try:',
      `  curl -s ${auth} "${api.url}/telemetry/streams?detail=1&window=24h"`,
      `  curl -s ${auth} "${api.url}/telemetry/metrics/${example.streamId}?window=1h"`,
      `  curl -s ${auth} "${api.url}/telemetry/timeseries?streamId=${example.streamId}&bucketSeconds=300&window=24h"`,
      '',
    ].join('\n'),
  );
  await closeOnSignals(api, rt.log);
}
