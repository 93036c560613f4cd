// The `filter` query parameter of breakdowns and stream metrics (docs/api.md, "Breakdowns"):
// `<dimension>:<value>` keeps the sessions with that value, `!<dimension>:<value>` drops them; an
// empty value (`device:`) is the value null. Parsed into a typed structure, bounded in number and
// length, and written back in one canonical form (the answer's `filters`, the cache key).
import { problems } from './problems.ts';
import { BREAKDOWN_DIMENSIONS, isSessionDimension, NO_FILTERS, type BreakdownFilters, type SessionDimension } from '../warehouse/reads/index.ts';

/** Filters one request may give. */
export const MAX_FILTERS = 50;
/** Characters of one filter (`!`, dimension, colon and value). */
export const MAX_FILTER_CHARS = 256;

export interface ParsedFilters {
  filters: BreakdownFilters;
  /** The canonical list: dimensions in order, keeps before drops, values sorted, no repeats. */
  canonical: string[];
}

export const NO_PARSED_FILTERS: ParsedFilters = { filters: NO_FILTERS, canonical: [] };

const invalid = (detail: string) =>
  problems.invalidQuery('invalid_filter', detail, { parameter: 'filter', allowed: BREAKDOWN_DIMENSIONS, form: '[!]<dimension>:<value>' });

/** The query's `filter` values (a string, or an array when repeated), parsed; 400 invalid_filter for any bad one. */
export function parseFilters(raw: string | string[] | undefined): ParsedFilters {
  if (raw === undefined) return NO_PARSED_FILTERS;
  const list = typeof raw === 'string' ? [raw] : raw;
  if (list.length > MAX_FILTERS) throw invalid(`At most ${MAX_FILTERS} filters may be given.`);
  const sets = new Map<SessionDimension, { keep: Set<string | null>; drop: Set<string | null> }>();
  for (const f of list) {
    const { dimension, drop, value } = parseOne(f);
    let s = sets.get(dimension);
    if (!s) sets.set(dimension, (s = { keep: new Set(), drop: new Set() }));
    (drop ? s.drop : s.keep).add(value);
  }
  const filters = new Map<SessionDimension, { keep: (string | null)[]; drop: (string | null)[] }>();
  const canonical: string[] = [];
  for (const d of BREAKDOWN_DIMENSIONS) {
    const s = sets.get(d);
    if (!s) continue;
    const keep = sorted(s.keep);
    const drop = sorted(s.drop);
    filters.set(d, { keep, drop });
    for (const v of keep) canonical.push(`${d}:${v ?? ''}`);
    for (const v of drop) canonical.push(`!${d}:${v ?? ''}`);
  }
  return { filters, canonical };
}

function parseOne(f: string): { dimension: SessionDimension; drop: boolean; value: string | null } {
  if (f.length > MAX_FILTER_CHARS) throw invalid(`A filter is at most ${MAX_FILTER_CHARS} characters.`);
  const drop = f.startsWith('!');
  const body = drop ? f.slice(1) : f;
  const colon = body.indexOf(':');
  if (colon < 0) throw invalid(`A filter is <dimension>:<value> or !<dimension>:<value>; "${echo(f)}" has no colon.`);
  const name = body.slice(0, colon);
  if (!isSessionDimension(name)) throw invalid(`"${echo(name)}" is not a dimension; the dimensions are ${BREAKDOWN_DIMENSIONS.join(', ')}.`);
  const value = body.slice(colon + 1);
  return { dimension: name, drop, value: value === '' ? null : value };
}

/** Null (the value null) first, then values in code point order. */
function sorted(values: Set<string | null>): (string | null)[] {
  return [...values].sort((a, b) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1));
}

const echo = (s: string) => (s.length > 40 ? `${s.slice(0, 40)}…` : s).replace(/[^\x20-\x7e]/g, '?');
