// Query strings, validated at the edge by each route's zod schema (api/schemas/). A failure is a
// 400 with the stable code of the first bad parameter (docs/api.md: invalid_window,
// invalid_bucket_seconds, ...), built here and nowhere else, with a detail taken from the same
// JSON Schema the OpenAPI document shows.
import querystring, { type ParsedUrlQuery } from 'node:querystring';
import type { Context } from 'koa';
import type { z } from 'zod';
import type { ApiError } from '../lib/http/problem.ts';
import { problems } from '../served/problems.ts';
import { toJsonSchema } from '../lib/json-schema.ts';

/** The request's query parameters, parsed once (node:querystring is several times faster than Koa's getter). */
export function queryOf(ctx: Context): ParsedUrlQuery {
  let q = ctx.state['query'] as ParsedUrlQuery | undefined;
  if (!q) {
    q = querystring.parse(ctx.querystring);
    ctx.state['query'] = q;
  }
  return q;
}

/** Parameters whose problem code is not `invalid_<snake_case name>`. */
const CODES: ReadonlyMap<string, string> = new Map([
  ['from', 'invalid_period'],
  ['to', 'invalid_period'],
]);

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
export const problemCodeOf = (name: string): string => CODES.get(name) ?? `invalid_${snake(name)}`;

interface ParamProblem {
  code: string;
  detail: string;
  extra: Record<string, unknown>;
}

/** The 400 of one bad parameter, worded from its JSON Schema (enum, integer range, date). */
function describeParam(name: string, field: z.ZodType | undefined): ParamProblem {
  const s = field ? toJsonSchema(field, { io: 'input' }) : {};
  const code = problemCodeOf(name);
  if (Array.isArray(s['enum'])) return { code, detail: `${name} must be one of ${s['enum'].join(', ')}.`, extra: { parameter: name, allowed: s['enum'] } };
  if (s['type'] === 'integer') {
    const { minimum, maximum } = s as { minimum: number; maximum: number };
    return { code, detail: `${name} must be an integer from ${minimum} to ${maximum}.`, extra: { parameter: name, minimum, maximum } };
  }
  if (s['format'] === 'date') return { code, detail: `${name} must be a date YYYY-MM-DD.`, extra: { parameter: name } };
  return { code, detail: `${name} is not valid.`, extra: { parameter: name } };
}

/** Worded once per schema and parameter: a bad request costs no JSON Schema conversion. */
const described = new WeakMap<z.ZodObject, Map<string, ParamProblem>>();

function problemFor(schema: z.ZodObject, name: string): ApiError {
  let byName = described.get(schema);
  if (!byName) described.set(schema, (byName = new Map()));
  let p = byName.get(name);
  if (!p) byName.set(name, (p = describeParam(name, schema.shape[name] as z.ZodType | undefined)));
  return problems.invalidQuery(p.code, p.detail, p.extra);
}

/**
 * Parsed query strings per schema, by their raw text: clients poll the same few URLs, so the
 * common case costs one map lookup. Bounded: cleared when full (a miss only costs a parse).
 */
const memos = new WeakMap<z.ZodObject, Map<string, unknown>>();
const MEMO_SIZE = 512;

/**
 * The query parameters a schema names, parsed and typed (treat the result as read-only: it is
 * shared by requests with the same query string). Repeated parameters are refused rather than
 * guessed at; parameters the schema does not name are ignored.
 */
export function parseQuery<S extends z.ZodObject>(ctx: Context, schema: S): z.output<S> {
  let memo = memos.get(schema);
  if (!memo) memos.set(schema, (memo = new Map()));
  const raw = ctx.querystring;
  const hit = memo.get(raw);
  if (hit !== undefined) return hit as z.output<S>;
  const query = queryOf(ctx);
  for (const name in schema.shape) {
    if (Array.isArray(query[name])) {
      throw problems.invalidQuery(problemCodeOf(name), `${name} is given more than once.`, { parameter: name });
    }
  }
  const parsed = schema.safeParse(query);
  if (!parsed.success) throw problemFor(schema, String(parsed.error.issues[0]?.path[0] ?? ''));
  if (memo.size >= MEMO_SIZE) memo.clear();
  memo.set(raw, Object.freeze(parsed.data));
  return parsed.data;
}
