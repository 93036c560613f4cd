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

/** The rule's step at a snapshot after `prev` (undefined: never evaluated). */
export function nextStep(rule: AlertRule, prev: RuleRun | undefined, o: Observation): Step {
  const open = prev?.openIncident ?? null;
  const base = { snapshot: o.snapshot, asOf: o.asOf, value: o.value, sessions: o.sessions, openIncident: open };
  const to = (state: AlertState, pendingSince: string | null = null): RuleRun => ({
    ...base,
    state,
    since: prev && prev.state === state ? prev.since : o.asOf,
    pendingSince,
  });
  if (o.value === null || o.sessions < rule.minSessions) return { run: to('insufficient_data'), change: null };
  const v = o.value;
  if (open !== null) {
    if (recovered(rule, v)) return { run: { ...to('ok'), openIncident: null }, change: 'resolve' };
    return { run: to('firing'), change: 'worse' };
  }
  if (!breaches(rule, v)) return { run: to('ok'), change: null };
  const pendingSince = prev?.state === 'pending' && prev.pendingSince ? prev.pendingSince : o.asOf;
  if (Date.parse(o.asOf) - Date.parse(pendingSince) >= forMs(rule.for)) return { run: to('firing'), change: 'open' };
  return { run: to('pending', pendingSince), change: null };
}
