// Every rule of every tenant evaluated on one published snapshot (docs/alerts.md): the figures of
// each distinct question computed once (rule-figures.ts), each rule's step (transitions.ts), and
// the tenant's state document changed under its lock only when something durable changed (an
// incident opened, resolved or worsened, a rule's state, a rule new or gone). Evaluations take
// turns (state-store.ts settleEvaluation, every process) and a completed one records its asOf:
// a rule is stepped only by a snapshot later than both its own last change and the newest
// snapshot evaluated, so a snapshot evaluated twice, or after a later one, opens no second
// incident and makes no second event. A step that changes nothing durable is not written: the
// same snapshot evaluated again from the same state makes the same step.
import { createHash } from 'node:crypto';
import type { Db } from '../warehouse/duckdb/index.ts';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import type { Logger } from '../lib/log.ts';
import { listTenants, type Tenant } from '../control/tenants.ts';
import type { ServedSnapshot } from '../served/snapshot-store.ts';
import { listRules } from './rules-store.ts';
import { readState, settleEvaluation, updateState } from './state-store.ts';
import { questionsFigures, questionKey, type Figures, type Question } from './rule-figures.ts';
import { decide, instantMs, nextStep, worse, type Observation, type Step } from './transitions.ts';
import type { AlertRule } from './rule-schema.ts';
import type { EventType, RuleRun, StateDoc, StoredIncident } from './incident-schema.ts';
import { alertMetrics } from './metrics.ts';

export interface EvaluationDeps {
  db: Db;
  layout: WarehouseLayout;
  log: Logger;
  /** Customers whose rules' figures one query computes (default ALERT_CUSTOMERS_PER_QUERY). */
  customersPerQuery?: number;
}

/**
 * Customers per batched statement by default: bounds the session classes one statement holds at
 * once (their 24h rows), and keeps the files each reads together (reading files is most of the cost).
 */
export const ALERT_CUSTOMERS_PER_QUERY = 100;

export interface Evaluation {
  snapshot: string;
  rules: number;
  /** Distinct questions computed (rules sharing one count once). */
  questions: number;
  opened: number;
  resolved: number;
  firing: number;
  ms: number;
  /** Of `ms`, the time computing the questions' figures (the rest: rules and state documents). */
  figuresMs: number;
}

/** A stable id of `parts` with a prefix (an incident of a rule and snapshot, an event of an incident). */
export const stableId = (prefix: string, ...parts: string[]) => `${prefix}_${createHash('sha256').update(parts.join('\0')).digest('base64url').slice(0, 24)}`;

export async function evaluateSnapshot(deps: EvaluationDeps, snap: ServedSnapshot): Promise<Evaluation> {
  const started = performance.now();
  const tenants: { tenant: Tenant; rules: readonly AlertRule[] }[] = [];
  for (const tenant of await listTenants(deps.layout)) {
    const rules = await listRules(deps.layout, tenant.id);
    if (rules.length > 0) tenants.push({ tenant, rules });
  }
  const asked = performance.now();
  const figures = await answerQuestions(deps, snap, tenants);
  const out: Evaluation = { snapshot: snap.id, rules: 0, questions: figures.size, opened: 0, resolved: 0, firing: 0, ms: 0, figuresMs: performance.now() - asked };
  await settleEvaluation(deps.layout, snap, async (settledMs) => {
    // Tenants' documents are separate files under their own locks: several are written at once.
    await inLanes(tenants, STATE_WRITES_AT_ONCE, async ({ tenant, rules }) => {
      const observe = (rule: AlertRule) => observation(snap, figures.get(questionOf(tenant.customerId, rule).key), rule);
      const steps = (doc: Readonly<StateDoc>) => applyRules(doc, tenant, rules, snap, settledMs, observe);
      // The document as it is (its parse kept while the file is unchanged) checked first, making no
      // run: most snapshots change nothing durable, and then nothing more is done. Otherwise its
      // steps, and again under its lock from the document then, written.
      const read = await readState(deps.layout, tenant.id);
      let counts = unchangedCounts(read, tenant.customerId, rules, snap, settledMs, figures);
      if (counts === null) {
        const dry = steps(read);
        // Under the lock, the document unchanged since is the very object read: its steps are made.
        counts = dry.changed ? await updateState(deps.layout, tenant.id, (doc) => (doc === read ? dry : steps(doc))) : dry.result;
      }
      alertMetrics.evaluations.inc(counts.evaluated);
      out.rules += rules.length;
      out.opened += counts.opened;
      out.resolved += counts.resolved;
      out.firing += counts.firing;
    });
  });
  out.ms = performance.now() - started;
  record(out);
  return out;
}

/** Tenants' state documents written at once. */
const STATE_WRITES_AT_ONCE = 8;

/** `work` on every item, at most `lanes` at once. */
async function inLanes<T>(items: readonly T[], lanes: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
}

/** The figures of every distinct question of the rules; those of a failed query are left out (their rules: insufficient_data). */
async function answerQuestions(deps: EvaluationDeps, snap: ServedSnapshot, tenants: { tenant: Tenant; rules: readonly AlertRule[] }[]): Promise<Map<string, Figures>> {
  const questions = new Map<string, Question>();
  for (const { tenant, rules } of tenants) {
    for (const rule of rules) {
      const { key, question } = questionOf(tenant.customerId, rule);
      questions.set(key, question);
    }
  }
  return questionsFigures(deps.db, snap, questions, deps.customersPerQuery ?? ALERT_CUSTOMERS_PER_QUERY, (err) =>
    deps.log.warn({ err: err.message, snapshot: snap.id }, 'alert figures failed; the rules asking a query are insufficient_data'),
  );
}

/**
 * questionKey of a rule, kept while the rule's object lives: rules come from the parsed rules
 * documents, kept while their files are unchanged (readDocumentCached), so each is worked out once.
 */
const asked = new WeakMap<AlertRule, { customerId: string; key: string; question: Question }>();
function questionOf(customerId: string, rule: AlertRule): { key: string; question: Question } {
  const hit = asked.get(rule);
  if (hit?.customerId === customerId) return hit;
  const q = { customerId, ...questionKey(customerId, rule) };
  asked.set(rule, q);
  return q;
}

function observation(snap: ServedSnapshot, f: Figures | undefined, rule: AlertRule): Observation {
  return { snapshot: snap.id, asOf: snap.manifest.asOf, value: valueOf(f, rule), sessions: f?.totalSessions ?? 0 };
}

function valueOf(f: Figures | undefined, rule: AlertRule): number | null {
  const value = f?.[rule.metric];
  return typeof value === 'number' ? value : null;
}

/** Whether the rule is stepped by this snapshot: later than its run's asOf and the newest snapshot evaluated (`settledMs`). */
function stepped(prev: RuleRun | undefined, snap: ServedSnapshot, settledMs: number): boolean {
  return Math.max(settledMs, prev ? instantMs(prev.asOf) : Number.NEGATIVE_INFINITY) < snap.asOfMs;
}

type Counts = { opened: number; resolved: number; firing: number; evaluated: number };

/**
 * applyRules' counts when its steps change nothing durable (no incident opened, resolved or
 * worse, no rule's state, pendingSince or open incident moved, no rule new or gone), else null.
 * Decides each step (transitions.ts decide) without making its run: the steady case, where most
 * snapshots leave every rule where it was, costs no object per rule.
 */
function unchangedCounts(doc: Readonly<StateDoc>, customerId: string, rules: readonly AlertRule[], snap: ServedSnapshot, settledMs: number, figures: ReadonlyMap<string, Figures>): Counts | null {
  const counts = { opened: 0, resolved: 0, firing: 0, evaluated: 0 };
  const ids = ruleIds(rules);
  if (Object.keys(doc.runs).some((id) => !ids.has(id))) return null;
  for (const rule of rules) {
    const prev = Object.hasOwn(doc.runs, rule.id) ? doc.runs[rule.id] : undefined;
    if (prev === undefined) return null;
    if (stepped(prev, snap, settledMs)) {
      counts.evaluated++;
      const f = figures.get(questionOf(customerId, rule).key);
      const value = valueOf(f, rule);
      const { state, change, pendingSince } = decide(rule, prev, value, f?.totalSessions ?? 0, snap.manifest.asOf, snap.asOfMs);
      if (state !== prev.state || pendingSince !== prev.pendingSince || change === 'open' || change === 'resolve') return null;
      if (change === 'worse') {
        const open = incidentsById(doc).get(prev.openIncident!);
        if (open !== undefined && worse(rule, value!, open.worstValue)) return null;
      }
    }
    if (prev.state === 'firing') counts.firing++;
  }
  return counts;
}

/** The ids of a tenant's rules, kept while the rules' parse lives. */
const ruleIdSets = new WeakMap<readonly AlertRule[], Set<string>>();
function ruleIds(rules: readonly AlertRule[]): Set<string> {
  let ids = ruleIdSets.get(rules);
  if (ids === undefined) ruleIdSets.set(rules, (ids = new Set(rules.map((r) => r.id))));
  return ids;
}

/** The first incident of each id of a state document, kept while its parse lives. */
const incidentIndexes = new WeakMap<Readonly<StateDoc>, Map<string, StoredIncident>>();
function incidentsById(doc: Readonly<StateDoc>): Map<string, StoredIncident> {
  let index = incidentIndexes.get(doc);
  if (index === undefined) {
    index = new Map();
    for (const i of doc.incidents) if (!index.has(i.id)) index.set(i.id, i);
    incidentIndexes.set(doc, index);
  }
  return index;
}

/**
 * The state document after this snapshot's steps of the tenant's rules (rules gone are forgotten),
 * and whether anything durable changed. A rule is stepped unless its last recorded step or the
 * newest snapshot evaluated (`settledMs`) is at least as late as this one.
 */
function applyRules(doc: Readonly<StateDoc>, tenant: Tenant, rules: readonly AlertRule[], snap: ServedSnapshot, settledMs: number, observe: (r: AlertRule) => Observation) {
  const runs: StateDoc['runs'] = {};
  const incidents = [...doc.incidents];
  const counts: Counts = { opened: 0, resolved: 0, firing: 0, evaluated: 0 };
  const ids = ruleIds(rules);
  let changed = Object.keys(doc.runs).some((id) => !ids.has(id));
  for (const rule of rules) {
    const prev = Object.hasOwn(doc.runs, rule.id) ? doc.runs[rule.id] : undefined;
    if (!stepped(prev, snap, settledMs)) {
      if (prev) runs[rule.id] = prev;
    } else {
      counts.evaluated++;
      const step = nextStep(rule, prev, observe(rule), snap.asOfMs);
      const { run, durable } = applyChange(incidents, tenant, rule, step, counts);
      runs[rule.id] = run;
      if (durable || !prev || run.state !== prev.state || run.since !== prev.since || run.pendingSince !== prev.pendingSince || run.openIncident !== prev.openIncident) changed = true;
    }
    if (runs[rule.id]?.state === 'firing') counts.firing++;
  }
  return { next: { runs, incidents }, result: counts, changed };
}

/** The rule's run after the step, and whether its incidents changed (opened, resolved, a worse value). */
function applyChange(incidents: StoredIncident[], tenant: Tenant, rule: AlertRule, step: Step, counts: { opened: number; resolved: number }): { run: StateDoc['runs'][string]; durable: boolean } {
  const { run, change } = step;
  const value = run.value!;
  const event = (incidentId: string, type: EventType) => ({ id: stableId('msg', incidentId, type), type, timestamp: new Date().toISOString(), enqueued: false });
  if (change === 'open') {
    const id = stableId('inc', rule.id, run.snapshot);
    incidents.push({
      id, ruleId: rule.id, customerId: tenant.customerId, state: 'open', openedAt: run.asOf, resolvedAt: null, valueAtOpen: value, worstValue: value,
      valueAtClose: null, openedSnapshot: run.snapshot, resolvedSnapshot: null, rule, events: [event(id, 'incident.opened')],
    });
    counts.opened++;
    return { run: { ...run, openIncident: id }, durable: true };
  }
  const at = incidents.findIndex((i) => i.id === run.openIncident || (change === 'resolve' && i.state === 'open' && i.ruleId === rule.id));
  if (at < 0 || change === null) return { run, durable: false };
  const inc = incidents[at]!;
  const worst = worse(rule, value, inc.worstValue) ? value : inc.worstValue;
  if (change === 'worse') {
    if (worst === inc.worstValue) return { run, durable: false };
    incidents[at] = { ...inc, worstValue: worst };
  } else {
    incidents[at] = { ...inc, state: 'resolved', resolvedAt: run.asOf, valueAtClose: value, worstValue: worst, resolvedSnapshot: run.snapshot, events: [...inc.events, event(inc.id, 'incident.resolved')] };
    counts.resolved++;
  }
  return { run, durable: true };
}

function record(e: Evaluation): void {
  alertMetrics.snapshotSeconds.observe(e.ms / 1000);
  alertMetrics.questions.inc(e.questions);
  alertMetrics.firing.set(e.firing);
  if (e.opened > 0) alertMetrics.incidents.inc({ change: 'opened' }, e.opened);
  if (e.resolved > 0) alertMetrics.incidents.inc({ change: 'resolved' }, e.resolved);
}
