// The `start` command's work: the API and a collector at once (serving the snapshot CURRENT names
// and taking reports into the spool), then sample data, a first run, a summary, a tenant, the
// pilot reports, a token, an ingest key kept across starts and a curl that posts a gzip'd report;
// then it keeps rolling up inline as reports land (jobs/live-rollups.ts), so that the API is live.
import path from 'node:path';
import { noFlags } from '../options.ts';
import { closeOnSignals, runtime, SECOND_SIGNAL, withJobDeps, type Runtime } from '../runtime.ts';
import { terminationSignal } from '../../lib/signals.ts';
import { progressBar } from '../progress.ts';
import { createLogger } from '../../lib/log.ts';
import { startApi } from '../../api/server.ts';
import { issueToken, tokenSecret } from '../../api/tokens.ts';
import { addTenant, findTenant } from '../../control/tenants.ts';
import { loadPlatformConfig } from '../../config/platform.ts';
import { discoverLanding } from '../../warehouse/landing/index.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline, type PipelineResult } from '../../jobs/pipeline.ts';
import { STALE_REBUILT_REASON } from '../../jobs/rollup/rebuild-metrics.ts';
import { runReports } from '../../jobs/pilot-reports/run.ts';
import { currentSnapshot, readStreamSummaries, type SnapshotManifest } from '../../warehouse/snapshots/index.ts';
import { customersWithData, latestPublishedReports } from '../../pilot/publish.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { DEFAULT_CUSTOMERS, describeGeneration } from './generate.ts';
import { describeRun } from './pipeline.ts';
import { bytes, percent, table } from '../format.ts';
import { startCollector } from '../../collector/server.ts';
import { sampleIngestKey } from '../../control/sample-key.ts';
import { SESSION_REPORTS_PATH } from '../../collector/route.ts';
import { testStartSessions, type AppConfig, type SettingOverrides } from '../../lib/config.ts';
import type { JobDeps } from '../../jobs/deps.ts';
import type { Tenant } from '../../control/tenants.ts';
import type { StreamSummary } from '../../warehouse/snapshots/index.ts';
import type { RunningApi } from '../../api/server.ts';
import { createPortal, type Portal } from '../../portal/portal.ts';
import type { RunningCollector } from '../../collector/server.ts';
import { LiveRollups, type LiveRun } from '../../jobs/live-rollups.ts';
import { LiveCompaction } from '../../jobs/live-compaction.ts';
import { LiveRebuild } from '../../jobs/live-rebuild.ts';
import { LiveAlerts } from '../../alerts/live-alerts.ts';
import { START_DEFAULTS } from '../../lib/settings/command-defaults.ts';

/** Its flags are all settings' (PORT, HOST, COLLECTOR_PORT). */
export const Flags = noFlags;

const START_KEY_LABEL = 'sample (npm start)';
/** Sessions a stream of the sample data holds (3 customers × 3 streams, six hours). */
const SAMPLE_SESSIONS = 400;

/**
 * Live like every deployment by default: its collector lands what it takes every 2 s
 * (COLLECTOR_FLUSH_SECONDS), and a run starts as soon as a landing ends (a quarter of a second
 * after the previous run at least, which leaves the API, the collector and the background
 * compaction a moment: at 50 ms the runs under bench:live's load took longer and freshness was no
 * better, docs/benchmarks.md), and every ROLLUP_IDLE_SECONDS anyway; each run lands what the
 * collector holds first.
 */
const MIN_GAP_MS = 250;
/** Between the end of one background compaction pass (small files, layer merges) and the next. */
const LIVE_COMPACTION_GAP_MS = 5_000;

/** The API and the collector, open while `start` runs. */
interface Served {
  api: RunningApi<Portal>;
  collector: RunningCollector;
  /** Whether the collector landed anything since the ports opened (the live loop then runs at once). */
  landedSinceOpen(): boolean;
  close(): Promise<void>;
}

/** What the first run found to show: the sample tenant, a stream of it, and the reports it counted. */
interface Example {
  tenant: Tenant;
  streamId: string;
  reports: number;
}

const out = (s: string) => process.stdout.write(`${s}\n`);

/**
 * SIGINT or SIGTERM, heard from the first line of `run` (and while the code loaded: bin/p2ptel.js)
 * to the process's end: `signal` resolves with the first; `heard` says whether it came.
 */
interface Stop {
  signal: Promise<string>;
  heard(): boolean;
}

const STOP_MESSAGE = 'start: stopping (the run in flight finishes, the collector lands its spool)';

export async function run(_flags: unknown, settings: SettingOverrides): Promise<void> {
  // Its own defaults for memory (lib/settings/command-defaults.ts): all of it in one process.
  const rt = runtime(settings, 'command', START_DEFAULTS);
  // Ctrl-C at any moment is a clean stop, exit 0: the step in flight (sample data, the first run,
  // the pilot reports) finishes, nothing after it starts, and the ports close as in the live loop.
  const stop = listenForStop(rt);
  const layout = warehouseLayout(rt.config.warehouseDir);
  out(`warehouse: ${layout.root}`);
  // What is durable is served at once (docs/architecture.md, principle 12); the first run catches up behind.
  const served = await openPorts(rt.config);
  let example: Example | null | 'stopped';
  try {
    example = stop.heard() ? 'stopped' : await withJobDeps(rt, (deps) => catchUp(deps, rt.config, stop));
    if (example !== 'stopped' && example !== null && !stop.heard()) await printTryIt(rt, served, example);
  } catch (err) {
    await served.close();
    throw err;
  }
  if (example === 'stopped' || stop.heard()) {
    rt.log.info({ signal: await stop.signal }, STOP_MESSAGE);
    out('\nstopped before serving live');
    await served.close();
    return;
  }
  if (!example) {
    out('\nno stream reported anything: nothing to serve yet');
    await served.close();
    return;
  }
  await serveLive(rt, served, example.reports, stop);
}

function listenForStop(rt: Runtime): Stop {
  let heard = false;
  const signal = terminationSignal(rt.log, SECOND_SIGNAL).then((s) => {
    heard = true;
    out(`\n${s}: stopping (the step in flight finishes; a second Ctrl-C exits at once)`);
    return s;
  });
  return { signal, heard: () => heard };
}

/** The API and the collector, listening before any run: the snapshot CURRENT names, the spool. */
async function openPorts(config: AppConfig): Promise<Served> {
  const api = await startApi(config, createLogger(config.logLevel, 'p2ptel-api'), { deliveries: 'outbox', pages: createPortal });
  const collector = await startCollector(config, createLogger(config.logLevel, 'p2ptel-collector')).catch(async (err: unknown) => {
    await api.close();
    throw err;
  });
  let landed = false;
  collector.deps.flusher.onLanded(() => {
    landed = true;
  });
  const snapshot = api.deps.store.current()?.id ?? null;
  out(`API on ${api.url} and collector on ${collector.url} answer now (${snapshot ? `snapshot ${snapshot}` : 'no snapshot yet'}); a first run catches up`);
  return { api, collector, landedSinceOpen: () => landed, close: async () => void (await Promise.all([collector.close(), api.close()])) };
}

/** Sample data when the landing area is empty, a first run, the streams' table, the sample tenant and its pilot reports. */
async function catchUp(deps: JobDeps, config: AppConfig, stop: Stop): Promise<Example | null | 'stopped'> {
  await sampleDataIfEmpty(deps);
  if (stop.heard()) return 'stopped';
  const bar = progressBar('pipeline');
  // After a deployment that changed a state's SQL, the stale states serve as they are: the
  // background rebuild replaces them once the live loop runs (serveLive), unless it is off.
  const run = await runPipeline(deps, { asOf: new Date(), rebuildStale: !backgroundRebuild(config) }, (p) => bar.update((100 * p.done) / p.total, p.step)).finally(() => bar.stop());
  out(describeRun(run));
  if (stop.heard()) return 'stopped';
  const snap = await currentSnapshot(deps.layout);
  if (!snap) return null;
  const rows = await readStreamSummaries(deps.db, snap, '24h');
  out('\nstreams, last 24 hours:');
  out(streamsTable(rows));
  // The example stream: the first with reports in the last 24 hours, else the first of all.
  const streamId = rows[0]?.streamId ?? (await readStreamSummaries(deps.db, snap, 'all'))[0]?.streamId;
  if (!streamId) return null;
  const tenant = await sampleTenant(deps, config, streamId.split(':')[0]!);
  if (stop.heard()) return 'stopped';
  const { due, latest } = await reportsDue(deps, snap.manifest);
  if (due.length > 0) await renderReports(deps, tenant.customerId, due);
  else sayReportsKept(tenant.customerId, latest.get(tenant.customerId) ?? null);
  return { tenant, streamId, reports: run.manifest.rows.reports };
}

/**
 * Pilot reports are nightly: a customer's latest published ones, rendered less than this long ago,
 * are not rendered again when `start` starts again (a restart, a crash, a deployment, as the worker
 * tier's nightly cron does not render on a deployment either): the live loop is not held back by
 * every stream's report (minutes with a hundred streams). The API renders the current snapshot's
 * reports on demand meanwhile, with the running code.
 */
const REPORTS_KEPT_MS = 24 * 3_600_000;

type LatestReports = Awaited<ReturnType<typeof latestPublishedReports>>;

/**
 * The customers of the snapshot whose latest published reports are missing or older than
 * REPORTS_KEPT_MS, and every customer's latest published reports.
 */
async function reportsDue(deps: JobDeps, manifest: SnapshotManifest): Promise<{ due: string[]; latest: Map<string, LatestReports> }> {
  const due: string[] = [];
  const latest = new Map<string, LatestReports>();
  for (const customerId of customersWithData(manifest)) {
    const found = await latestPublishedReports(deps.layout, customerId);
    latest.set(customerId, found);
    if (found === null || !(Date.now() - Date.parse(found.published.renderedAt) < REPORTS_KEPT_MS)) due.push(customerId);
  }
  return { due, latest };
}

/** A start that renders no report says which it keeps, and where the sample customer's are. */
function sayReportsKept(customerId: string, latest: LatestReports): void {
  out(`\npilot reports: every customer's were rendered less than ${REPORTS_KEPT_MS / 3_600_000} h ago: kept (\`p2ptel reports\` renders them now)`);
  if (latest) out(`${customerId}'s reports as a static site (rendered ${latest.published.renderedAt}): ${path.join(latest.dir, 'index.html')}`);
}

async function sampleDataIfEmpty(deps: JobDeps): Promise<void> {
  const { files } = await discoverLanding(deps.layout);
  if (files.length > 0) {
    out(`landing area holds ${files.length} files: no sample data generated`);
    return;
  }
  const bar = progressBar('sample data');
  const started = Date.now();
  const now = Math.floor(Date.now() / 1000) * 1000;
  const gen = await generateReports(
    deps.db,
    deps.layout,
    { customers: DEFAULT_CUSTOMERS, streams: 3, sessions: testStartSessions() ?? SAMPLE_SESSIONS, start: new Date(now - 6 * 3_600_000), hours: 6, seed: 1 },
    (p, step) => bar.update(p, step),
  ).finally(() => bar.stop());
  out(await describeGeneration(gen, Date.now() - started));
}

function streamsTable(rows: StreamSummary[]): string {
  return table(
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
  );
}

/** A tenant for the customer (created once), so that its reports carry its name. */
async function sampleTenant(deps: JobDeps, config: AppConfig, customerId: string): Promise<Tenant> {
  const platform = loadPlatformConfig(config.platformConfigFile);
  return (
    (await findTenant(deps.layout, customerId)) ??
    (await addTenant(deps.layout, { customerId, name: `${customerId} (sample)`, cdnPricePerGb: null, savingsSharePct: platform.billing.defaultSavingsSharePct }))
  );
}

/** The nightly report run, once, for the customers whose reports are due: every stream's pilot report pre-rendered as a static site. */
async function renderReports(deps: JobDeps, customerId: string, customers: readonly string[]): Promise<void> {
  const reportsBar = progressBar('pilot reports');
  const reports = await runReports(deps, { asOf: new Date(), customers }, (p, step) => reportsBar.update(p, step)).finally(() => reportsBar.stop());
  out(`\n${reports.message}`);
  const site = reports.publications.find((p) => p.customerId === customerId);
  if (site) out(`${customerId}'s reports as a static site: ${path.join(site.dir, 'index.html')}`);
}

/** The tenant's token, the sample ingest key (the same at every start) and lines to try them. */
async function printTryIt(rt: Runtime, { api, collector }: Served, { tenant, streamId }: Example): Promise<void> {
  const { config } = rt;
  const layout = warehouseLayout(config.warehouseDir);
  const token = await issueToken(await tokenSecret(layout, config.tokenSecret), { role: 'tenant', tenant }, 30 * 86_400);
  // One sample ingest key, kept across starts: SDKs given it keep posting after a restart.
  const { key } = await sampleIngestKey(layout, tenant.customerId, START_KEY_LABEL);
  // The API and the collector poll the tenant list and the keys (REVOCATION_POLL_SECONDS): they
  // look again now, so that the token, the sign-in link and the key work the moment they are
  // printed, even when the tenant was made a moment ago (the first start of a warehouse).
  await Promise.all([api.deps.revocation.lookAgain(), collector.deps.keys.lookAgain()]);
  const auth = `-H "Authorization: Bearer ${token}"`;
  const signIn = await api.pages.signInLink(token);
  process.stdout.write(
    [
      '',
      `API listening on ${api.url} (Ctrl-C to stop)`,
      `portal: open ${signIn}`,
      `  (a one-time sign-in link, valid ${Math.round(config.portal.signInLinkMs / 60_000)} min; later, sign in at ${api.url}/portal/login with the token below)`,
      `tenant ${tenant.id} (customer ${tenant.customerId}); its token, valid 30 days:`,
      token,
      '',
      'try:',
      `  curl -s ${auth} "${api.url}/telemetry/streams?detail=1&window=24h"`,
      `  curl -s ${auth} "${api.url}/telemetry/metrics/${streamId}?window=1h"`,
      `  curl -s ${auth} "${api.url}/telemetry/timeseries?streamId=${streamId}&bucketSeconds=300&window=24h"`,
      `  curl -s ${auth} "${api.url}/control/reports/pilot/${streamId}?format=html" -o pilot-report.html`,
      '',
      `collector of SDK reports listening on ${collector.url}; ingest key of ${tenant.customerId} (public, write-only; the same at every start):`,
      key,
      `post a gzip'd batch of one report (it lands within ${Math.round(config.collector.flushIntervalMs / 1000)} s, and the API counts it a rollup later, within seconds):`,
      `  ${samplePostCurl(collector.url, key, streamId)}`,
      '',
      `live: a rollup runs as soon as reports land, and every ${config.schedules.idleRefreshMs / 1000} s; each new snapshot is printed below`,
      '',
    ].join('\n'),
  );
}

/**
 * Roll up inline while the API and the collector serve, until SIGINT or SIGTERM: then the run in
 * flight finishes, the collector lands what it holds, and both stop.
 */
async function serveLive(rt: Runtime, served: Served, counted: number, stop: Stop): Promise<void> {
  const { api, collector } = served;
  await withJobDeps(rt, async (deps) => {
    let reports = counted;
    let staleBefore = 0;
    // Rules are evaluated on every snapshot the API swaps in, off the rollups' path.
    const alerts = new LiveAlerts(api.deps, rt.log, (e) => {
      if (e.opened + e.resolved > 0) process.stdout.write(`alerts: ${e.opened} incident(s) opened, ${e.resolved} resolved at snapshot ${e.snapshot}\n`);
    });
    void alerts.published();
    const background = backgroundRebuild(rt.config);
    // Each run first lands what the collector holds (a segment open a quarter of the flush
    // interval at least): a report waits for the run in flight and its own, not for the flush too.
    const landFirstAgeMs = rt.config.collector.flushIntervalMs / 4;
    const policy = {
      minGapMs: MIN_GAP_MS,
      idleMs: Math.max(MIN_GAP_MS, rt.config.schedules.idleRefreshMs),
      staleInRuns: !background,
      landFirst: () => collector.deps.flusher.landNow(landFirstAgeMs),
    };
    let rebuild: LiveRebuild | null = null;
    const live = new LiveRollups(deps, policy, (run) => {
      const line = describeLiveRun(run, reports);
      if (run.result?.published) {
        reports = run.result.manifest.rows.reports;
        void alerts.published();
      }
      if (line) process.stdout.write(`${line}\n`);
      if (run.result?.published) {
        const said = describeRebuild(run.result.manifest.partitionStates, staleBefore);
        staleBefore = run.result.manifest.partitionStates?.stale ?? 0;
        if (said) process.stdout.write(`${said}\n`);
        if (staleBefore > 0) rebuild?.wake();
      }
    });
    if (background) {
      rebuild = new LiveRebuild(deps, live, { stepMs: rt.config.rebuild.backgroundStepMs, maxPartitions: rt.config.rebuild.budgetPartitions, maxReports: rt.config.rebuild.budgetReports }, (pass) => {
        if (pass.found === 0) return;
        const failed = pass.error ? ` and failed (${pass.error instanceof Error ? pass.error.message.split('\n')[0] : String(pass.error)})` : '';
        process.stdout.write(`live: background rebuild: ${pass.rebuilt} of ${pass.found} stale states rebuilt in ${(pass.ms / 1000).toFixed(1)} s${failed}\n`);
      });
      // The first run may have left stale states (a deployment): the lane looks at once.
      rebuild.wake();
    }
    collector.deps.flusher.onLanded(() => live.landed());
    live.start();
    // Reports landed while the first run caught up: roll them up now.
    if (served.landedSinceOpen()) live.landed();
    const compaction = new LiveCompaction(deps, LIVE_COMPACTION_GAP_MS);
    compaction.start();
    const stopping = {
      async close() {
        await Promise.all([live.stop(), compaction.stop(), rebuild?.stop()]);
        await alerts.idle();
        await Promise.all([collector.close(), api.close()]);
      },
    };
    await closeOnSignals(stopping, rt.log, STOP_MESSAGE, stop.signal);
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

/**
 * The rebuild after a deployment (docs/warehouse-state.md): its progress at each snapshot while
 * under way (the stale states the snapshot still used; those replaced since the previous one, by
 * the background rebuild or, with ROLLUP_REBUILD_BUDGET=0, by the run), and its end.
 */
function describeRebuild(ps: PipelineResult['manifest']['partitionStates'], staleBefore: number): string | null {
  const stale = ps?.stale ?? 0;
  const replaced = Math.max(ps?.reasons[STALE_REBUILT_REASON] ?? 0, staleBefore - stale);
  if (stale > 0) return `live: rebuild after a deployment under way: ${replaced} stale states replaced since the previous snapshot, ${stale} left`;
  return staleBefore > 0 || replaced > 0 ? `live: rebuild after a deployment over (${replaced} stale states replaced since the previous snapshot, none left)` : null;
}

/**
 * Whether `start` rebuilds stale states in a lane of its own (live-rebuild.ts, ROLLUP_REBUILD_SECONDS
 * above 0) rather than a budget of them in each run (the default), or all before its first run
 * publishes (ROLLUP_REBUILD_BUDGET=0, which wins).
 */
function backgroundRebuild(config: AppConfig): boolean {
  return config.rebuild.budgetPartitions > 0 && config.rebuild.backgroundStepMs > 0;
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
