// The checks of an alert rule beyond its schema: filters in the breakdown route's syntax and within
// the per-rule limit, a recovery threshold on the recovering side, no filters on activePeers (a
// summary figure, not a breakdown's). Each failure is named by its field, for a problem+json body.
import type { z } from 'zod';
import { parseFilters } from '../served/breakdown-filters.ts';
import { ApiError } from '../lib/http/problem.ts';
import type { RuleFields } from './rule-schema.ts';

export interface FieldProblem {
  field: string;
  reason: string;
}

/** zod's issues as field problems (the path joined with dots, `body` for the whole), the first of each field. */
export function fieldProblems(error: z.ZodError): FieldProblem[] {
  const out = new Map<string, string>();
  for (const i of error.issues) {
    const field = i.path.length > 0 ? i.path.join('.') : 'body';
    if (!out.has(field)) out.set(field, i.code === 'unrecognized_keys' ? `unknown field${i.keys.length > 1 ? 's' : ''} ${i.keys.join(', ')}` : i.message);
  }
  return [...out].map(([field, reason]) => ({ field, reason }));
}

/** What is wrong with a rule's fields as a whole; empty when nothing. */
export function ruleProblems(rule: RuleFields, maxFilters: number): FieldProblem[] {
  const out: FieldProblem[] = [];
  const filters = rule.filters ?? [];
  if (filters.length > maxFilters) out.push({ field: 'filters', reason: `at most ${maxFilters} filters per rule` });
  filters.slice(0, maxFilters).forEach((f, i) => {
    try {
      parseFilters([f]);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      out.push({ field: `filters.${i}`, reason: err.message });
    }
  });
  if (rule.metric === 'activePeers' && filters.length > 0) out.push({ field: 'filters', reason: 'activePeers is a stream summary figure: it takes no filters' });
  const r = rule.recoveryThreshold;
  if (r !== undefined && (rule.condition === 'above' ? r > rule.threshold : r < rule.threshold)) {
    out.push({ field: 'recoveryThreshold', reason: `with condition ${rule.condition}, at ${rule.condition === 'above' ? 'most' : 'least'} the threshold (${rule.threshold})` });
  }
  return out;
}
