// bench:alerts --live start|workers|both: the time from a posted report that makes a rule fire to
// the signed webhook received and verified (Standard Webhooks' own library), under bench:live's
// load and on its history (30 days × 100 streams), in `start` and on the worker tier, beside the
// API's freshness of the same reports; then the same with one more receiver answering in 5 s.
//
// Each probe, as an operator and an SDK would: a rule of the tenant (POST /control/alerts:
// totalSessions above 0 over 1h on a stream of its own, minSessions 1, for 0s), then one report
// of that stream posted to the collector with the SDK's ingest key; from its 202, the API is
// polled until it lists the stream (the freshness, as bench:live's probes) while every fast
// receiver (registered with POST /control/webhooks for incident.opened) waits for the rule's
// incident.opened and verifies its signature. Phase 1: the fast receivers only; phase 2: the
// same probes with a slow receiver (answering after --slow-ms) registered too: its deliveries
// back up (one at a time per endpoint) and must not delay the fast receivers'. Each incident's
// own times say where the time went: the report's 202 → the snapshot's asOf (openedAt: waiting
// for a run) → the event made (the evaluation; its timestamp) → received (the delivery).
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/version.ts';
import { startReceiver, type Received, type Receiver } from '../test/helpers/webhook-receiver.ts';
import { LiveBench, stats, postProbe, sleep, stop, untilListed, type HistorySize, type Stats, type Target } from './live-harness.ts';
import { writeResult } from './report.ts';

export interface AlertsLiveOptions extends HistorySize {
  mode: 'start' | 'workers' | 'both';
  dir: string;
  logs?: string;
  rate: string;
  /** Probes per phase. */
  probes: string;
  /** The phases in order, comma-separated: `fast` (the fast receivers only) or `slow` (and the slow one). */
  phases: string;
  probeEvery: string;
  rollupEvery: string;
  /** Receivers answering at once. */
  fast: string;
  /** How long the slow receiver takes to answer, ms. */
  slowMs: string;
  small: boolean;
}

/** The settings both deployments run with: the receivers are on 127.0.0.1. */
const ENV = { WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' };

interface Endpoint {
  id: string;
  secret: string;
  rx: Receiver;
}

interface ProbeTimes {
  freshnessMs: number;
  /** From the report's 202 to each fast receiver's verified incident.opened. */
  webhookMs: number[];
  /** Of the first fast receiver's delivery: 202 → snapshot asOf, asOf → event made. */
  toAsOfMs: number;
  toEventMs: number;
  /** Each fast receiver's: event made → received (the rest of the evaluation, the enqueueing, the delivery). */
  deliveryMs: number[];
}


interface PhaseResult {
  freshnessMs: Stats;
  /** The first fast receiver's, per probe. */
  webhookMs: Stats;
  /** Every fast receiver's deliveries. */
  fastMs: Stats;
  /** Per probe, webhook − freshness. */
  overFreshnessMs: Stats;
  toAsOfMs: Stats;
  toEventMs: Stats;
  deliveryMs: Stats;
  /** The slow receiver's deliveries received by the phase's end (phase 2). */
  slowReceived: number | null;
}

interface DeploymentResult {
  mode: 'start' | 'workers';
  background: { sent: number; refused: number };
  without: PhaseResult;
  withSlow: PhaseResult;
}

/** A JSON call of the HTTP API with the tenant's token. */
async function call<T>(t: Target, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${t.api}${route}`, {
    method,
    headers: { Authorization: `Bearer ${t.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (res.status === 204 ? null : await res.json()) as T;
}

async function register(t: Target, rx: Receiver): Promise<Endpoint> {
  const e = await call<{ id: string; secret: string }>(t, 'POST', '/control/webhooks', { url: `${rx.url}/hook`, events: ['incident.opened'] });
  return { id: e.id, secret: e.secret, rx };
}

interface OpenedEvent {
  type: string;
  timestamp: string;
  data: { incident: { openedAt: string }; rule: { id: string } };
}

/** The receiver's verified incident.opened of `ruleId` (throws if its signature does not verify). */
async function opened(e: Endpoint, ruleId: string, timeoutMs: number): Promise<{ at: number; event: OpenedEvent }> {
  const until = Date.now() + timeoutMs;
  for (let seen = 0; ; await sleep(20)) {
    for (; seen < e.rx.received.length; seen++) {
      const r: Received = e.rx.received[seen]!;
      const event = e.rx.verify(r, e.secret) as OpenedEvent;
      if (event.type === 'incident.opened' && event.data.rule.id === ruleId) return { at: r.at, event };
    }
    if (Date.now() > until) throw new Error(`no incident.opened of ${ruleId} at ${e.rx.url} within ${timeoutMs} ms`);
  }
}

/** One probe: a rule of its own stream, the stream's first report, its freshness and its webhooks. */
async function alertProbe(t: Target, fast: Endpoint[], tag: string, n: number): Promise<{ times: ProbeTimes; ruleId: string }> {
  const streamId = `${t.customer}:alert-${tag}-${n}`;
  const rule = await call<{ id: string }>(t, 'POST', '/control/alerts', {
    name: `bench:alerts probe ${n}`, metric: 'totalSessions', streamId, window: '1h', condition: 'above', threshold: 0, minSessions: 1, for: '0s',
  });
  const acked = await postProbe(t, streamId, n);
  const ackedAt = performance.timeOrigin + acked;
  const [freshnessMs, ...got] = await Promise.all([untilListed(t, streamId, acked, n), ...fast.map((e) => opened(e, rule.id, 180_000))]);
  const first = got[0]!;
  const asOf = Date.parse(first.event.data.incident.openedAt);
  const made = Date.parse(first.event.timestamp);
  const delivery = got.map((g) => g.at - Date.parse(g.event.timestamp));
  return {
    ruleId: rule.id,
    times: { freshnessMs, webhookMs: got.map((g) => g.at - ackedAt), toAsOfMs: asOf - ackedAt, toEventMs: made - asOf, deliveryMs: delivery },
  };
}

/** `probes` probes, one every `probeEvery` s (each runs to its end). */
async function phase(o: AlertsLiveOptions, t: Target, fast: Endpoint[], tag: string, rules: string[]): Promise<ProbeTimes[]> {
  const runs: Promise<ProbeTimes>[] = [];
  for (let n = 0; n < Number(o.probes); n++) {
    runs.push(alertProbe(t, fast, tag, n).then((p) => (rules.push(p.ruleId), p.times)));
    await sleep(Number(o.probeEvery) * 1000);
  }
  return Promise.all(runs);
}

function summarize(ps: ProbeTimes[], slowReceived: number | null): PhaseResult {
  return {
    freshnessMs: stats(ps.map((p) => p.freshnessMs)),
    webhookMs: stats(ps.map((p) => p.webhookMs[0]!)),
    fastMs: stats(ps.flatMap((p) => p.webhookMs)),
    overFreshnessMs: stats(ps.map((p) => p.webhookMs[0]! - p.freshnessMs)),
    toAsOfMs: stats(ps.map((p) => p.toAsOfMs)),
    toEventMs: stats(ps.map((p) => p.toEventMs)),
    deliveryMs: stats(ps.flatMap((p) => p.deliveryMs)),
    slowReceived,
  };
}

/**
 * The phases against a running deployment, under the background load, in the order `o.phases`
 * says (`fast`: the fast receivers only; `slow`: the slow receiver registered beside them, and
 * removed at the phase's end, its backlog with it); the rules and endpoints removed after.
 */
async function measure(o: AlertsLiveOptions, bench: LiveBench, t: Target, mode: DeploymentResult['mode']): Promise<DeploymentResult> {
  const receivers = await Promise.all(Array.from({ length: Number(o.fast) + 1 }, () => startReceiver()));
  const slowRx = receivers.pop()!;
  slowRx.answer.delayMs = Number(o.slowMs);
  const endpoints: Endpoint[] = [];
  const rules: string[] = [];
  let stopping = false;
  const load = bench.backgroundLoad(t, Number(o.rate), () => stopping);
  try {
    for (const rx of receivers) endpoints.push(await register(t, rx));
    const fast = [...endpoints];
    const tag = `${Date.now()}-${randomBytes(2).toString('hex')}`;
    const times: Record<Phase, ProbeTimes[]> = { fast: [], slow: [] };
    let slowReceived = 0;
    for (const [i, kind] of phasesOf(o).entries()) {
      process.stderr.write(`  ${mode}: ${o.probes} probes with ${fast.length} fast receivers${kind === 'slow' ? ` and one answering in ${o.slowMs} ms` : ''} ...\n`);
      const slow = kind === 'slow' ? await register(t, slowRx) : null;
      if (slow) endpoints.push(slow);
      const before = slowRx.received.length;
      times[kind].push(...(await phase(o, t, fast, `${tag}-${i}`, rules)));
      if (slow) {
        slowReceived += slowRx.received.length - before;
        await call(t, 'DELETE', `/control/webhooks/${slow.id}`);
        endpoints.splice(endpoints.indexOf(slow), 1);
      }
    }
    stopping = true;
    return { mode, background: await load, without: summarize(times.fast, null), withSlow: summarize(times.slow, slowReceived) };
  } finally {
    stopping = true;
    await load;
    for (const id of rules) await call(t, 'DELETE', `/control/alerts/${id}`).catch(() => null);
    for (const e of endpoints) await call(t, 'DELETE', `/control/webhooks/${e.id}`).catch(() => null);
    await Promise.all([...receivers, slowRx].map((rx) => rx.close()));
  }
}

type Phase = 'fast' | 'slow';

/** `--phases`, e.g. `fast,slow` or `slow,fast,slow,fast`: each phase `--probes` probes; at least one of each. */
function phasesOf(o: AlertsLiveOptions): Phase[] {
  const kinds = o.phases.split(',').map((k) => k.trim());
  const bad = kinds.filter((k) => k !== 'fast' && k !== 'slow');
  if (bad.length > 0 || !kinds.includes('fast') || !kinds.includes('slow')) throw new Error(`--phases: fast and slow, comma-separated, each at least once, not ${o.phases}`);
  return kinds as Phase[];
}

function describe(o: AlertsLiveOptions, r: DeploymentResult): string[] {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const st = (x: Stats) => `p50 ${s(x.p50)}, p95 ${s(x.p95)}, max ${s(x.max)}`;
  const title = r.mode === 'start' ? 'start (embedded default, its outbox)' : `workers (Redis, 2 workers, --rollup-every ${o.rollupEvery}, collect, serve; the webhooks queue)`;
  const a = r.without;
  const b = r.withSlow;
  const gap = a.webhookMs.p95 - a.freshnessMs.p95;
  return [
    `${title}: ${r.background.sent} reports sent, ${r.background.refused} requests refused`,
    `  webhook (202 → verified incident.opened at the first fast receiver), ${a.webhookMs.n} probes without the slow receiver: ${st(a.webhookMs)}; freshness of the same reports: ${st(a.freshnessMs)}`,
    `    p95 webhook − p95 freshness = ${s(gap)} (goal ≤ 2 s: ${gap <= 2000 ? 'met' : 'NOT met'}); per probe webhook − freshness: ${st(a.overFreshnessMs)}`,
    `    where (p50 / p95): 202 → snapshot asOf ${s(a.toAsOfMs.p50)} / ${s(a.toAsOfMs.p95)}, asOf → event made (run, publication, evaluation) ${s(a.toEventMs.p50)} / ${s(a.toEventMs.p95)}, event made → received ${s(a.deliveryMs.p50)} / ${s(a.deliveryMs.p95)}`,
    `  with a receiver answering in ${s(Number(o.slowMs))} beside them, ${b.webhookMs.n} probes: webhook ${st(b.webhookMs)}; freshness ${st(b.freshnessMs)}; per probe webhook − freshness ${st(b.overFreshnessMs)}; the slow one received ${b.slowReceived} of its ${b.webhookMs.n}`,
    `  fast receivers (${o.fast}), event made → received: without the slow one ${st(a.deliveryMs)} (${a.deliveryMs.n}); with it ${st(b.deliveryMs)} (${b.deliveryMs.n}); 202 → received: ${st(a.fastMs)}; with it ${st(b.fastMs)}`,
  ];
}

export async function runAlertsLive(o: AlertsLiveOptions): Promise<void> {
  if (o.logs) mkdirSync(o.logs, { recursive: true });
  const bench = new LiveBench({ dir: o.dir, logs: o.logs });
  await bench.ensureHistory(o);
  const results: DeploymentResult[] = [];
  if (o.mode !== 'workers') {
    process.stderr.write('start: p2ptel start ...\n');
    const { proc, target } = await bench.startStart('start', { ...process.env, ...ENV });
    try {
      results.push(await measure(o, bench, target, 'start'));
    } finally {
      await stop(proc, 'SIGINT');
    }
  }
  if (o.mode !== 'start') {
    const tier = await bench.startWorkerTier(o.rollupEvery, 'bench:alerts workers', ENV);
    try {
      results.push(await measure(o, bench, tier.target, 'workers'));
    } finally {
      await tier.close();
    }
  }
  process.stdout.write(
    [
      `alerts under live load: ${o.days} days × ${Number(o.customers) * Number(o.streams)} streams of history, ${o.rate} reports/s in the background, ${o.probes} probes per phase (${o.phases}) every ${o.probeEvery} s${o.small ? ' (--small: a check that it runs, not a measure)' : ''}`,
      ...results.flatMap((r) => describe(o, r)),
    ].join('\n') + '\n',
  );
  const file = await writeResult(o.small ? 'alerts-live-small' : 'alerts-live', { options: o, results });
  process.stdout.write(`  (${path.relative(PROJECT_ROOT, file)})\n`);
}
