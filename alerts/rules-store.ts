// A tenant's alert rules, in control/alerts/<tenantId>.json: a small control document, validated on
// read and write, replaced atomically and updated under its lock (control/documents.ts).
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { WarehouseLayout } from '../warehouse/layout.ts';
import { readDocumentCached, updateDocument } from '../control/documents.ts';
import { StoredRuleSchema, type AlertRule, type RuleFields } from './rule-schema.ts';

const RulesDocSchema = z.object({ version: z.int().min(0), rules: z.array(StoredRuleSchema) });
type RulesDoc = z.infer<typeof RulesDocSchema>;
const EMPTY: RulesDoc = { version: 0, rules: [] };

export class RuleLimitReached extends Error {
  override name = 'RuleLimitReached';
}

export const alertsDir = (layout: WarehouseLayout) => path.join(layout.control, 'alerts');
const rulesFile = (layout: WarehouseLayout, tenantId: string) => path.join(alertsDir(layout), `${tenantId}.json`);

/** A new id: `alr_` and 16 random base62-ish characters (no `:`, never all digits: BullMQ job ids). */
export function newId(prefix: string): string {
  const alphabet = 'ABCDEFGHJKMNPQRSTVWXYZabcdefghijkmnopqrstuvwxyz0123456789';
  return `${prefix}_${[...randomBytes(16)].map((b) => alphabet[b % alphabet.length]).join('')}`;
}

export async function listRules(layout: WarehouseLayout, tenantId: string): Promise<readonly AlertRule[]> {
  return (await readDocumentCached(rulesFile(layout, tenantId), RulesDocSchema, EMPTY)).rules;
}

export async function addRule(layout: WarehouseLayout, tenantId: string, fields: RuleFields, maxRules: number): Promise<AlertRule> {
  return updateDocument(rulesFile(layout, tenantId), RulesDocSchema, EMPTY, (doc) => {
    if (doc.rules.length >= maxRules) throw new RuleLimitReached(`at most ${maxRules} rules per tenant`);
    const now = new Date().toISOString();
    const rule: AlertRule = { ...fields, id: newId('alr'), createdAt: now, updatedAt: now };
    return { next: { version: doc.version + 1, rules: [...doc.rules, rule] }, result: rule };
  });
}

/** Replace rule `id` by `change(rule)`; null when there is no such rule. */
export function changeRule(layout: WarehouseLayout, tenantId: string, id: string, change: (rule: AlertRule) => RuleFields): Promise<AlertRule | null> {
  return updateDocument(rulesFile(layout, tenantId), RulesDocSchema, EMPTY, (doc) => {
    const at = doc.rules.findIndex((r) => r.id === id);
    if (at < 0) return { next: doc, result: null };
    const old = doc.rules[at]!;
    const rule: AlertRule = { ...change(old), id, createdAt: old.createdAt, updatedAt: new Date().toISOString() };
    const rules = doc.rules.map((r, i) => (i === at ? rule : r));
    return { next: { version: doc.version + 1, rules }, result: rule };
  });
}

export function removeRule(layout: WarehouseLayout, tenantId: string, id: string): Promise<boolean> {
  return updateDocument(rulesFile(layout, tenantId), RulesDocSchema, EMPTY, (doc) => {
    const rules = doc.rules.filter((r) => r.id !== id);
    return { next: { version: doc.version + (rules.length === doc.rules.length ? 0 : 1), rules }, result: rules.length !== doc.rules.length };
  });
}

/** Every tenant's rules (the evaluator's input): tenant id → rules, tenants without rules left out. */
export async function allRules(layout: WarehouseLayout, tenantIds: readonly string[]): Promise<Map<string, readonly AlertRule[]>> {
  const out = new Map<string, readonly AlertRule[]>();
  for (const id of tenantIds) {
    const rules = await listRules(layout, id);
    if (rules.length > 0) out.set(id, rules);
  }
  return out;
}

