// The `start` command's work: sample data, a pipeline run, a summary, a tenant, the pilot reports,
// a token, the API, and a collector with an ingest key and a curl that posts a gzip'd report; then
// it keeps rolling up inline as reports land (jobs/live-rollups.ts), so that the API is live.
import path from 'node:path';
import { noFlags } from '../options.ts';
import { closeOnSignals, runtime, withJobDeps, type Runtime } from '../runtime.ts';
import { progressBar } from '../progress.ts';
import { createLogger } from '../../lib/log.ts';
import { startApi } from '../../api/server.ts';
import { issueToken, tokenSecret } from '../../api/tokens.ts';
import { addTenant, findTenant } from '../../warehouse/control/tenants.ts';
import { loadPlatformConfig } from '../../config/platform.ts';
import { discoverLanding } from '../../warehouse/landing.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { runReports } from '../../jobs/reports/run.ts';
import { currentSnapshot, readStreamSummaries } from '../../warehouse/snapshot-read.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { DEFAULT_CUSTOMERS, describeGeneration } from './generate.ts';
import { describeRun } from './pipeline.ts';
import { bytes, percent, table } from '../format.ts';
import { startCollector } from '../../collector/server.ts';
import { addIngestKey, listIngestKeys, revokeIngestKey } from '../../warehouse/control/ingest-keys.ts';
import { SESSION_REPORTS_PATH } from '../../collector/route.ts';
import type { SettingOverrides } from '../../lib/config.ts';
import type { RunningApi } from '../../api/server.ts';
import type { RunningCollector } from '../../collector/server.ts';
import { LiveRollups, type LiveRun } from '../../jobs/live-rollups.ts';
import { LiveCompaction } from '../../jobs/live-compaction.ts';
import { LiveAlerts } from '../../alerts/live-alerts.ts';

/** Its flags are all settings' (PORT, HOST, COLLECTOR_PORT). */
export const Flags = noFlags;

const START_KEY_LABEL = 'sample (npm start)';

/**
 * The embedded default is live: its collector lands what it takes every 2 s (COLLECTOR_FLUSH_SECONDS,
 * 120 s elsewhere), and a run starts as soon as a landing ends (a quarter of a second after the
 * previous run at least, which leaves the API and the collector a moment), and every
 * 30 s anyway.
 */
const START_DEFAULTS = { COLLECTOR_FLUSH_SECONDS: '2' };
const LIVE_POLICY = { minGapMs: 250, idleMs: 30_000 };
/** Between the end of one background compaction pass (small files, layer merges) and the next. */
const LIVE_COMPACTION_GAP_MS = 5_000;

export async function run(_flags: unknown, settings: SettingOverrides): Promise<void> {
  const rt = runtime(settings, 'command', START_DEFAULTS);
  const { config } = rt;
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
    // The example stream: the first with reports in the last 24 hours, else the first of all.
    const streamId = rows[0]?.streamId ?? (await readStreamSummaries(deps.db, snap, 'all'))[0]?.streamId;
    if (!streamId) return null;
    const customerId = streamId.split(':')[0]!;

    // A tenant for the first customer (created once), so that its reports carry its name.
    const platform = loadPlatformConfig(config.platformConfigFile);
    const tenant =
      (await findTenant(deps.layout, customerId)) ??
      (await addTenant(deps.layout, {
        customerId,
        name: `${customerId} (sample)`,
        cdnPricePerGb: null,
        savingsSharePct: platform.billing.defaultSavingsSharePct,
      }));

    // The nightly report run, once: every stream's pilot report pre-rendered as a static site.
    const reportsBar = progressBar('pilot reports');
    const reports = await runReports(deps, { asOf: new Date() }, (p, step) => reportsBar.update(p, step)).finally(() => reportsBar.stop());
    out(`\n${reports.message}`);
    const site = reports.publications.find((p) => p.customerId === customerId);
    if (site) out(`${customerId}'s reports as a static site: ${path.join(site.dir, 'index.html')}`);
    return { tenant, streamId, reports: run.manifest.rows.reports };
  });
  if (!example) {
    process.stdout.write('\nno stream reported anything: nothing to serve yet\n');
    return;
  }
  const { tenant, streamId, reports } = example;
  const layout = warehouseLayout(config.warehouseDir);
  const token = await issueToken(await tokenSecret(layout, config.tokenSecret), { role: 'tenant', tenant }, 30 * 86_400);

  const api = await startApi(config, createLogger(config.logLevel, 'p2ptel-api'));
  const collectorLog = createLogger(config.logLevel, 'p2ptel-collector');
  const collector = await startCollector(config, collectorLog);
  // One sample ingest key at a time: the previous run's is revoked (keys are printed only once).
  for (const k of await listIngestKeys(layout)) {
    if (k.label === START_KEY_LABEL && k.revokedAt === null) await revokeIngestKey(layout, k.id);
  }
  const { key } = await addIngestKey(layout, { customer: tenant.customerId, label: START_KEY_LABEL });
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
      `  curl -s ${auth} "${api.url}/telemetry/metrics/${streamId}?window=1h"`,
      `  curl -s ${auth} "${api.url}/telemetry/timeseries?streamId=${streamId}&bucketSeconds=300&window=24h"`,
      `  curl -s ${auth} "${api.url}/control/reports/pilot/${streamId}?format=html" -o pilot-report.html`,
      '',
      `collector of SDK reports listening on ${collector.url}; ingest key of ${tenant.customerId} (public, write-only):`,
      key,
      `post a gzip'd batch of one report (it lands within ${Math.round(config.collector.flushIntervalMs / 1000)} s, and the API counts it a rollup later, within seconds):`,
      `  ${samplePostCurl(collector.url, key, streamId)}`,
      '',
      `live: a rollup runs as soon as reports land, and every ${LIVE_POLICY.idleMs / 1000} s; each new snapshot is printed below`,
      '',
    ].join('\n'),
  );
  await serveLive(rt, api, collector, reports);
}

/**
 * Roll up inline while the API and the collector serve, until SIGINT or SIGTERM: then the run in
 * flight finishes, the collector lands what it holds, and both stop.
 */
async function serveLive(rt: Runtime, api: RunningApi, collector: RunningCollector, counted: number): Promise<void> {
  await withJobDeps(rt, async (deps) => {
    let reports = counted;
    // Rules are evaluated on every snapshot the API swaps in, off the rollups' path.
    const alerts = new LiveAlerts(api.deps, rt.log, (e) => {
      if (e.opened + e.resolved > 0) process.stdout.write(`alerts: ${e.opened} incident(s) opened, ${e.resolved} resolved at snapshot ${e.snapshot}\n`);
    });
    void alerts.published();
    const live = new LiveRollups(deps, LIVE_POLICY, (run) => {
      const line = describeLiveRun(run, reports);
      if (run.result?.published) {
        reports = run.result.manifest.rows.reports;
        void alerts.published();
      }
      if (line) process.stdout.write(`${line}\n`);
    });
    collector.deps.flusher.onLanded(() => live.landed());
    live.start();
    const compaction = new LiveCompaction(deps, LIVE_COMPACTION_GAP_MS);
    compaction.start();
    const stopping = {
      async close() {
        await Promise.all([live.stop(), compaction.stop()]);
        await alerts.idle();
        await Promise.all([collector.close(), api.close()]);
      },
    };
    await closeOnSignals(stopping, rt.log, 'start: stopping (the run in flight finishes, the collector lands its spool)');
  });
}

/** One line for a live run that changed what the API serves, or failed; null otherwise. */
function describeLiveRun(run: LiveRun, reportsBefore: number): string | null {
  const seconds = (run.ms / 1000).toFixed(2);
  if (run.error) return `live: a rollup failed (${run.error instanceof Error ? run.error.message.split('\n')[0] : String(run.error)}); the next one tries again`;
  const r = run.result!;
  if (!r.published) return null;
  const reports = r.manifest.rows.reports;
  if (reports === reportsBefore && run.reason === 'idle') return null;
  const added = reports - reportsBefore;
  return `live: snapshot as of ${r.manifest.asOf} counts ${reports.toLocaleString('en-US')} reports (${added >= 0 ? '+' : ''}${added.toLocaleString('en-US')}), rolled up in ${seconds} s`;
}

/** A shell line that posts one fresh report (its id and ts made when it runs), gzip'd. */
export function samplePostCurl(url: string, key: string, streamId: string): string {
  const report =
    `{"reportId":"curl-%s","sessionId":"curl-%s","streamId":"${streamId}","ts":"%s","intervalMs":30000,"seq":0,"final":true,` +
    `"cohort":"p2p","contentType":"live","bytesOffloaded":3000000,"bytesFallback":1000000,"peerCount":3,"bufferHealth":12.5,"watchMs":30000,"startupMs":900}`;
  return (
    `now=$(date -u +%Y-%m-%dT%H:%M:%SZ); id=$(date +%s)$RANDOM; printf '{"reports":[${report}]}' "$id" "$id" "$now" | gzip | ` +
    `curl -s -X POST --data-binary @- -H "Content-Type: application/json" -H "Content-Encoding: gzip" -H "X-Ingest-Key: ${key}" "${url}${SESSION_REPORTS_PATH}"`
  );
}
