// bench:alerts: the cost of evaluating many rules on one snapshot (default 10,000 rules over 100
// tenants; goal ≤ 200 ms, rules sharing a question computed once) and the latency of a webhook
// from the outbox to a receiver on loopback (p50/p95). `--tenants 3 --rules 30 --pings 5` runs it
// small. `--live start|workers|both`: the time from a posted report to the verified webhook under
// bench:live's load, beside the API's freshness, and with a slow receiver (bench/alerts-live.ts;
// `--live both --small` runs it small).
// Every evaluation is of a distinct snapshot: the published one seen under a later asOf and
// another id (test/helpers/later-snapshot.ts: same files, same figures), so each evaluation does
// all the work a new publication asks (every question's figures, every rule stepped). Each round
// measures two: a *new snapshot* with the evaluation state of the one before (the figures did not
// move: nothing durable changes, the steady case), and the *first evaluation* from no state at
// all (every state document and evaluated.json removed: every rule new, 3,700 incidents opened,
// every tenant's document written, the worst case).
// Baselines measured in the same run, over the same snapshot files: `bare`, one DuckDB statement
// reading the session class rows (of the widest window asked) of the rules' customers into a
// table, nothing computed, of the columns the figures' statement reads (its Parquet scan's
// projections, from EXPLAIN of that statement): the floor of any computation of these figures,
// reading the files being most of the cost; `unbatched`, one breakdown query per distinct question (the route's
// breakdownRows, as evaluation did before batching; --unbatched 0 skips it).
import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { openJobDeps } from '../jobs/deps.ts';
import { runPipeline } from '../jobs/pipeline.ts';
import { generateReports } from '../warehouse/sample/index.ts';
import { addTenant } from '../control/tenants.ts';
import { currentSnapshot } from '../warehouse/snapshots/index.ts';
import { loadSnapshot } from '../served/snapshot-store.ts';
import { ResponseCache } from '../served/response-cache.ts';
import { tempDir } from '../test/helpers/warehouse.ts';
import { laterSnapshot } from '../test/helpers/later-snapshot.ts';
import { startReceiver } from '../test/helpers/webhook-receiver.ts';
import { addRule, alertsDir } from '../alerts/rules-store.ts';
import type { Db } from '../warehouse/duckdb/index.ts';
import { ALERT_METRICS, ALERT_WINDOWS, type RuleFields } from '../alerts/rule-schema.ts';
import { ALERT_CUSTOMERS_PER_QUERY, evaluateSnapshot } from '../alerts/evaluate.ts';
import { questionKey, type Question } from '../alerts/rule-figures.ts';
import { listRules } from '../alerts/rules-store.ts';
import { listTenants } from '../control/tenants.ts';
import { parseFilters } from '../served/breakdown-filters.ts';
import { breakdownRows } from '../served/ondemand-breakdowns.ts';
import { batchSql, sessionClassesRelation, snapshotWindowClass } from '../warehouse/reads/index.ts';
import { isShortWindow } from '../warehouse/figures/index.ts';
import type { ServedSnapshot } from '../served/snapshot-store.ts';
import { addEndpoint } from '../alerts/webhooks/endpoints-store.ts';
import { WebhookOutbox } from '../alerts/webhooks/outbox.ts';
import { PROJECT_ROOT } from '../lib/version.ts';
import { runAlertsLive } from './alerts-live.ts';

const opts = new Command()
  .option('--tenants <n>', 'tenants (one customer each)', '100')
  .option('--rules <n>', 'rules in all', '10000')
  .option('--pings <n>', 'webhooks timed', '200')
  .option('--rounds <n>', 'evaluations timed', '5')
  .option('--customers-per-query <n>', 'customers per batched query', String(ALERT_CUSTOMERS_PER_QUERY))
  .option('--unbatched <n>', 'rounds of the unbatched baseline (one query per question)', '1')
  .option('--live <mode>', 'instead: report → verified webhook under the live load, in start, workers or both (bench/alerts-live.ts)')
  .option('--small', 'with --live: a day of 10 streams, 200 reports/s, 2 probes per phase (a check that it runs, not a measure)')
  .option('--dir <dir>', 'with --live: warehouse folder (history generated into it when empty); default bench/output/live (live-small with --small)')
  .option('--logs <dir>', "with --live: keep every process's whole output in <dir>/<name>.log")
  .option('--days <n>', 'with --live: days of history', '30')
  .option('--customers <n>', 'with --live: customers', '10')
  .option('--streams <n>', 'with --live: streams per customer', '10')
  .option('--sessions <n>', 'with --live: sessions per stream over the period', '1350')
  .option('--rate <n>', 'with --live: background reports per second', '5000')
  .option('--probes <n>', 'with --live: probes per phase', '10')
  .option('--phases <list>', 'with --live: phases in order, `fast` (the fast receivers only) or `slow` (a slow receiver beside them)', 'fast,slow')
  .option('--probe-every <s>', 'with --live: seconds between probes', '3')
  .option('--rollup-every <duration>', "with --live: the worker tier's rollup interval", '2s')
  .option('--fast <n>', 'with --live: receivers answering at once', '3')
  .option('--slow-ms <ms>', 'with --live: how long the slow receiver takes to answer', '5000')
  .parse()
  .opts<{ tenants: string; rules: string; pings: string; rounds: string; customersPerQuery: string; unbatched: string; live?: string; small?: boolean; dir?: string; logs?: string; days: string; customers: string; streams: string; sessions: string; rate: string; probes: string; phases: string; probeEvery: string; rollupEvery: string; fast: string; slowMs: string }>();
if (opts.live !== undefined) {
  if (opts.live !== 'start' && opts.live !== 'workers' && opts.live !== 'both') throw new Error(`--live: start, workers or both, not ${opts.live}`);
  const small = opts.small === true;
  const sizes = small ? { days: '1', customers: '2', streams: '5', sessions: '40', rate: '200', probes: '2', probeEvery: '2' } : {};
  const { live, ...rest } = opts;
  await runAlertsLive({
    ...rest,
    ...sizes,
    mode: live,
    small,
    dir: path.resolve(opts.dir ?? path.join(PROJECT_ROOT, 'bench', 'output', small ? 'live-small' : 'live')),
  });
  process.exit(0);
}
const tenants = Number(opts.tenants);
const rules = Number(opts.rules);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/**
 * The windows of the rules: the snapshot's ones of ALERT_WINDOWS (1h, 24h), as in the entries
 * measured before the short windows existed (a short window's figures come from the recent
 * reports, not the session class files this bench's baselines read).
 */
const WINDOWS = ALERT_WINDOWS.filter((w) => !isShortWindow(w));

/** A rule of a small set of shapes: many rules share a question, as real ones do. */
function ruleOf(customerId: string, i: number): RuleFields {
  const metric = ALERT_METRICS[i % ALERT_METRICS.length]!;
  const filters = metric === 'activePeers' || i % 3 === 0 ? [] : [i % 2 ? 'device:mobile' : '!region:eu-west'];
  return {
    name: `rule ${i}`, metric, window: WINDOWS[i % WINDOWS.length]!, condition: i % 2 ? 'above' : 'below', threshold: 0.5,
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
  const questions = await distinctQuestions(deps.layout);
  const customersPerQuery = Number(opts.customersPerQuery);
  const columns = await scannedColumns(deps.db, snap, questions);
  console.log(`the figures' statement reads ${columns.length} columns of the session classes: ${columns.join(', ')}`);
  const times: number[] = [];
  const figureTimes: number[] = [];
  const fresh: number[] = [];
  const freshFigures: number[] = [];
  const bare: number[] = [];
  const unbatched: number[] = [];
  const evaluate = (minutes: number) => evaluateSnapshot({ ...deps, log: silentLogger, customersPerQuery }, laterSnapshot(snap, minutes * 60_000));
  for (let r = 0; r < Number(opts.rounds); r++) {
    // The first evaluation: no state at all (every rule new; this run's incidents opened).
    for (const f of await fs.readdir(alertsDir(deps.layout))) if (f.endsWith('.state.json') || f === 'evaluated.json') await fs.rm(`${alertsDir(deps.layout)}/${f}`);
    let started = performance.now();
    const first = await evaluate(2 * r);
    fresh.push(performance.now() - started);
    freshFigures.push(first.figuresMs);
    // A new snapshot after it, its state carried: the same figures, nothing durable changes.
    started = performance.now();
    const e = await evaluate(2 * r + 1);
    times.push(performance.now() - started);
    figureTimes.push(e.figuresMs);
    if (r === 0) console.log(`evaluation: ${e.rules} rules, ${e.questions} distinct questions, ${customersPerQuery} customer(s) per query; first evaluation ${first.opened} opened, new snapshot ${e.opened} opened ${e.resolved} resolved, ${e.firing} firing`);
    bare.push(await bareRead(deps.db, snap, questions, columns));
    if (r < Number(opts.unbatched)) unbatched.push(await perQuestion(deps.db, snap, questions));
  }
  const ms = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;
  const rest = (all: number[], figures: number[]) => all.map((x, i) => x - figures[i]!);
  console.log(`evaluation of a new snapshot (state carried, nothing durable changes): ${ms(times)} (goal ≤ 200 ms at 10,000 rules); of which figures ${ms(figureTimes)}, the rest (rules, steps, state documents) ${ms(rest(times, figureTimes))}`);
  console.log(`first evaluation (no state: every rule new, every tenant's document written): ${ms(fresh)}; of which figures ${ms(freshFigures)}, the rest ${ms(rest(fresh, freshFigures))}`);
  console.log(`baseline bare (the session class rows of the widest window read once, into a table): ${ms(bare)}; evaluation / bare = ${(pct(times, 50) / pct(bare, 50)).toFixed(2)}, figures / bare = ${(pct(figureTimes, 50) / pct(bare, 50)).toFixed(2)}, first evaluation / bare = ${(pct(fresh, 50) / pct(bare, 50)).toFixed(2)}`);
  if (unbatched.length > 0) console.log(`baseline unbatched (one breakdown query per question): ${ms(unbatched)}; unbatched / evaluation = ${(pct(unbatched, 50) / pct(times, 50)).toFixed(1)}`);

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

/** The distinct questions of every tenant's rules. */
async function distinctQuestions(layout: typeof deps.layout): Promise<Question[]> {
  const out = new Map<string, Question>();
  for (const tenant of await listTenants(layout)) {
    for (const rule of await listRules(layout, tenant.id)) {
      const { key, question } = questionKey(tenant.customerId, rule);
      out.set(key, question);
    }
  }
  return [...out.values()];
}

/** A question answered by a query (not from the snapshot's memory). */
function queried(q: Question): boolean {
  return q.streamId === null || q.filters.length > 0;
}

/** The session class columns the batched statement of `questions` reads: its Parquet scan's projections (EXPLAIN). */
async function scannedColumns(db: Db, snap: ServedSnapshot, questions: Question[]): Promise<string[]> {
  const asked = questions.filter(queried);
  const relation = sessionClassesRelation([...new Set(asked.map((q) => q.customerId))].flatMap((c) => snap.sessionClassFiles(c)));
  const { sql, params, types } = batchSql(relation, asked.map((q) => ({ ...q, filters: parseFilters([...q.filters]).filters })));
  const rows = await db.withSession((s) => s.all<{ explain_value: string }>(`EXPLAIN (FORMAT json) ${sql}`, params, types));
  interface PlanNode { name?: string; extra_info?: { Projections?: string | string[] }; children?: PlanNode[] }
  const out = new Set<string>();
  const walk = (n: PlanNode): void => {
    const p = n.extra_info?.Projections;
    if (n.name?.includes('READ_PARQUET') && p !== undefined) for (const c of typeof p === 'string' ? [p] : p) out.add(c);
    (n.children ?? []).forEach(walk);
  };
  (JSON.parse(rows[0]!.explain_value) as PlanNode[]).forEach(walk);
  if (out.size === 0) throw new Error('no Parquet scan in the plan of the figures statement');
  return [...out];
}

/** The floor of any computation of these figures: reading the rules' customers' session class rows of the widest window once. */
async function bareRead(db: Db, snap: ServedSnapshot, questions: Question[], columns: readonly string[]): Promise<number> {
  const started = performance.now();
  const customers = [...new Set(questions.filter(queried).map((q) => q.customerId))];
  const widest = Math.max(...questions.map((q) => snapshotWindowClass(q.window)));
  const relation = sessionClassesRelation(customers.flatMap((c) => snap.sessionClassFiles(c)));
  await db.withSession(async (s) => {
    await s.run(`CREATE OR REPLACE TEMP TABLE bench_read AS SELECT ${columns.map((c) => `"${c}"`).join(', ')} FROM ${relation} WHERE class <= ${widest}`);
    await s.run('DROP TABLE bench_read');
  });
  return performance.now() - started;
}

/** One breakdown query per question, as the route computes one (evaluation before batching). */
async function perQuestion(db: Db, snap: ServedSnapshot, questions: Question[]): Promise<number> {
  const started = performance.now();
  for (const q of questions.filter(queried)) {
    await breakdownRows(db, snap, { customers: [q.customerId], streamId: q.streamId }, { window: q.window, by: null, filters: parseFilters([...q.filters]).filters });
  }
  return performance.now() - started;
}
