// A rule's next state from its value at a snapshot (docs/alerts.md, "States"): ok, pending (the
// condition holds, for less than `for`), firing (an incident is open), insufficient_data (fewer
// sessions than minSessions, or no value). A firing rule recovers only past its recovery threshold
// (hysteresis); an incident stays open until the value recovers, whatever data comes between.
import { forMs, type AlertRule, type AlertState } from './rule-schema.ts';
import type { RuleRun } from './incident-schema.ts';

/** What a snapshot says of a rule's scope: its value (null when the figure has none) and sessions. */
export interface Observation {
  snapshot: string;
  asOf: string;
  value: number | null;
  sessions: number;
}

export type Change = 'open' | 'resolve' | 'worse' | null;

export interface Step {
  run: RuleRun;
  /** What happens to the rule's incident: one opens, the open one resolves, or its worst value moves. */
  change: Change;
}

const breaches = (rule: AlertRule, v: number) => (rule.condition === 'above' ? v > rule.threshold : v < rule.threshold);
const recovered = (rule: AlertRule, v: number) => {
  const r = rule.recoveryThreshold ?? rule.threshold;
  return rule.condition === 'above' ? v <= r : v >= r;
};

/** Whether `a` is worse than `b` for this rule. */
export const worse = (rule: AlertRule, a: number, b: number) => (rule.condition === 'above' ? a > b : a < b);

/**
 * What a rule's step at a snapshot decides, before any run is made: its state, the change to its
 * incident, and since when it is pending (null unless pending). `asOfMs` is `asOf` parsed.
 * nextStep makes the run from it; evaluate.ts's check of a tenant's rules (whether anything
 * durable changes) uses it alone, making no run.
 */
export interface Decision {
  state: AlertState;
  change: Change;
  pendingSince: string | null;
}

const INSUFFICIENT: Decision = { state: 'insufficient_data', change: null, pendingSince: null };
const RESOLVE: Decision = { state: 'ok', change: 'resolve', pendingSince: null };
const WORSE: Decision = { state: 'firing', change: 'worse', pendingSince: null };
const OK: Decision = { state: 'ok', change: null, pendingSince: null };
const OPEN: Decision = { state: 'firing', change: 'open', pendingSince: null };

/** `for` of a rule in ms, kept while the rule's object lives (a rule is stepped at every snapshot). */
const forOf = new WeakMap<AlertRule, number>();
function ruleForMs(rule: AlertRule): number {
  let ms = forOf.get(rule);
  if (ms === undefined) forOf.set(rule, (ms = forMs(rule.for)));
  return ms;
}

/** Date.parse of the instants a step reads: most runs of a document share a few (the asOf of the last step written). */
let lastInstant = '';
let lastInstantMs = Number.NaN;
export function instantMs(iso: string): number {
  if (iso !== lastInstant) {
    lastInstantMs = Date.parse(iso);
    lastInstant = iso;
  }
  return lastInstantMs;
}

/** The decision of the rule's step at a snapshot (asOf, parsed: asOfMs) after `prev` (undefined: never evaluated). */
export function decide(rule: AlertRule, prev: RuleRun | undefined, value: number | null, sessions: number, asOf: string, asOfMs: number): Decision {
  if (value === null || sessions < rule.minSessions) return INSUFFICIENT;
  if (prev !== undefined && prev.openIncident !== null) return recovered(rule, value) ? RESOLVE : WORSE;
  if (!breaches(rule, value)) return OK;
  const pendingSince = prev?.state === 'pending' && prev.pendingSince ? prev.pendingSince : asOf;
  if (asOfMs - (pendingSince === asOf ? asOfMs : instantMs(pendingSince)) >= ruleForMs(rule)) return OPEN;
  return { state: 'pending', change: null, pendingSince };
}

/** The rule's step at a snapshot after `prev` (undefined: never evaluated). */
export function nextStep(rule: AlertRule, prev: RuleRun | undefined, o: Observation, asOfMs: number = Date.parse(o.asOf)): Step {
  const { state, change, pendingSince } = decide(rule, prev, o.value, o.sessions, o.asOf, asOfMs);
  const run: RuleRun = {
    snapshot: o.snapshot,
    asOf: o.asOf,
    value: o.value,
    sessions: o.sessions,
    openIncident: change === 'resolve' ? null : (prev?.openIncident ?? null),
    state,
    since: prev && prev.state === state ? prev.since : o.asOf,
    pendingSince,
  };
  return { run, change };
}
