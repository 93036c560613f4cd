// bench:alerts: the cost of evaluating many rules on one snapshot (default 10,000 rules over 100
// tenants; goal ≤ 200 ms, rules sharing a question computed once) and the latency of a webhook
// from the outbox to a receiver on loopback (p50/p95). `--tenants 3 --rules 30 --pings 5` runs it
// small. Not measured here: the time from a posted report to the webhook under live load.
import fs from 'node:fs/promises';
import { Command } from 'commander';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { openJobDeps } from '../jobs/deps.ts';
import { runPipeline } from '../jobs/pipeline.ts';
import { generateReports } from '../warehouse/sample/generate.ts';
import { addTenant } from '../warehouse/control/tenants.ts';
import { currentSnapshot } from '../warehouse/snapshot-read.ts';
import { loadSnapshot } from '../api/snapshot-store.ts';
import { ResponseCache } from '../api/response-cache.ts';
import { tempDir } from '../test/helpers/warehouse.ts';
import { startReceiver } from '../test/helpers/webhook-receiver.ts';
import { addRule, alertsDir } from '../alerts/rules-store.ts';
import { ALERT_METRICS, ALERT_WINDOWS, type RuleFields } from '../alerts/rule-schema.ts';
import { evaluateSnapshot } from '../alerts/evaluate.ts';
import { addEndpoint } from '../alerts/webhooks/endpoints-store.ts';
import { WebhookOutbox } from '../alerts/webhooks/outbox.ts';

const opts = new Command()
  .option('--tenants <n>', 'tenants (one customer each)', '100')
  .option('--rules <n>', 'rules in all', '10000')
  .option('--pings <n>', 'webhooks timed', '200')
  .option('--rounds <n>', 'evaluations timed', '5')
  .parse()
  .opts<{ tenants: string; rules: string; pings: string; rounds: string }>();
const tenants = Number(opts.tenants);
const rules = Number(opts.rules);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** A rule of a small set of shapes: many rules share a question, as real ones do. */
function ruleOf(customerId: string, i: number): RuleFields {
  const metric = ALERT_METRICS[i % ALERT_METRICS.length]!;
  const filters = metric === 'activePeers' || i % 3 === 0 ? [] : [i % 2 ? 'device:mobile' : '!region:eu-west'];
  return {
    name: `rule ${i}`, metric, window: ALERT_WINDOWS[i % ALERT_WINDOWS.length]!, condition: i % 2 ? 'above' : 'below', threshold: 0.5,
    minSessions: 1, for: '0s', filters, ...(i % 4 === 0 ? { streamId: `${customerId}:live-${i % 2}` } : {}),
  };
}

const root = await tempDir('p2ptel-bench-alerts-');
const config = loadConfig({ overrides: { WAREHOUSE_DIR: root } });
const deps = await openJobDeps(config, silentLogger);
try {
  const customers = Array.from({ length: tenants }, (_, i) => `c${i}`);
  const now = Math.floor(Date.now() / 60_000) * 60_000;
  await generateReports(deps.db, deps.layout, { customers, streams: 2, sessions: 20, start: new Date(now - 2 * 3_600_000), hours: 2, seed: 7 });
  await runPipeline(deps, { asOf: new Date(now) });
  for (const [t, customerId] of customers.entries()) {
    const tenant = await addTenant(deps.layout, { customerId, name: customerId, cdnPricePerGb: null, savingsSharePct: 25 });
    const mine = Math.floor(rules / tenants) + (t < rules % tenants ? 1 : 0);
    for (let i = 0; i < mine; i++) await addRule(deps.layout, tenant.id, ruleOf(customerId, i), Number.POSITIVE_INFINITY);
  }
  const snap = await loadSnapshot(deps.db, deps.layout, (await currentSnapshot(deps.layout))!.manifest.snapshot, new ResponseCache(16 * 2 ** 20));
  const times: number[] = [];
  for (let r = 0; r < Number(opts.rounds); r++) {
    // A snapshot steps each rule once: each round starts from no evaluation state.
    for (const f of await fs.readdir(alertsDir(deps.layout))) if (f.endsWith('.state.json')) await fs.rm(`${alertsDir(deps.layout)}/${f}`);
    const started = performance.now();
    const e = await evaluateSnapshot({ ...deps, log: silentLogger }, snap);
    times.push(performance.now() - started);
    if (r === 0) console.log(`evaluation: ${e.rules} rules, ${e.questions} distinct questions, ${e.opened} opened`);
  }
  console.log(`evaluation per snapshot: p50 ${pct(times, 50).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms (goal ≤ 200 ms at 10,000 rules)`);

  const rx = await startReceiver();
  const outbox = new WebhookOutbox(deps.layout, { timeoutMs: 10_000, allowPrivate: true, retryForMs: 86_400_000 }, silentLogger);
  outbox.start();
  const endpoint = await addEndpoint(deps.layout, 't_bench', { url: rx.url, events: ['ping'] }, 10);
  const latencies: number[] = [];
  for (let i = 0; i < Number(opts.pings); i++) {
    const started = Date.now();
    await outbox.enqueue('t_bench', endpoint, { id: `msg_bench${i}`, type: 'ping', timestamp: new Date().toISOString(), data: {} });
    await rx.waitFor(i + 1);
    latencies.push(rx.received[i]!.at - started);
  }
  console.log(`webhook latency (outbox to receiver, loopback): p50 ${pct(latencies, 50)} ms, p95 ${pct(latencies, 95)} ms over ${latencies.length}`);
  await outbox.stop();
  await rx.close();
} finally {
  await deps.close();
  await fs.rm(root, { recursive: true, force: true });
}
