// The one conversion from zod schemas to JSON Schema 2020-12 (the dialect of OpenAPI 3.1) for the
// generated documents (docs: OpenAPI, pilot-report.schema.json), and the field shapes they share.
import { z } from 'zod';

/** A count: an integer, zero or more. */
export const count = () => z.int().min(0);
/** Zero or more (bytes as doubles, averages, GB). */
export const nonNegative = () => z.number().min(0);
/** A share of a whole, 0–1. */
export const fraction = () => z.number().min(0).max(1);
/** An instant as the API writes it: ISO 8601 UTC with milliseconds. */
export const isoInstant = () => z.iso.datetime({ precision: 3 }).describe('ISO 8601 UTC with milliseconds');
/** A UTC calendar day, YYYY-MM-DD. */
export const isoDate = () => z.iso.date();

type JsonObject = Record<string, unknown>;

/**
 * Drop what zod adds that says nothing to a reader: the safe-integer bounds of every integer and
 * the long regular expressions behind `format: date-time` / `date` (validators check the format).
 */
function tidy(s: JsonObject): void {
  if (s['type'] === 'integer') {
    if (s['maximum'] === Number.MAX_SAFE_INTEGER) delete s['maximum'];
    if (s['minimum'] === Number.MIN_SAFE_INTEGER) delete s['minimum'];
  }
  if (s['type'] === 'string' && (s['format'] === 'date-time' || s['format'] === 'date')) delete s['pattern'];
}

export interface JsonSchemaOptions {
  /** `input` for what a client sends (defaults make a field optional), `output` for responses. */
  io?: 'input' | 'output';
  /** Where schemas with an `id` (in their meta) are referenced, e.g. `#/components/schemas/`. */
  refPrefix?: string;
}

/** One schema as JSON Schema 2020-12; schemas with an id become `$defs` (or refs to `refPrefix`). */
export function toJsonSchema(schema: z.ZodType, opts: JsonSchemaOptions = {}): JsonObject {
  return z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: opts.io ?? 'output',
    unrepresentable: 'any',
    override: (ctx) => tidy(ctx.jsonSchema as JsonObject),
    ...(opts.refPrefix ? { uri: (id: string) => `${opts.refPrefix}${id}` } : {}),
  }) as JsonObject;
}

/**
 * Every schema of a registry as named JSON Schemas that reference each other through `prefix`
 * (OpenAPI's `#/components/schemas/`), without the per-schema `$schema`/`$id` of a standalone file.
 */
export function registryToJsonSchemas(registry: z.core.$ZodRegistry<{ id?: string }>, prefix: string, io: 'input' | 'output' = 'output'): Record<string, JsonObject> {
  const out = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: (ctx) => tidy(ctx.jsonSchema as JsonObject),
    uri: (id: string) => `${prefix}${id}`,
  }) as { schemas: Record<string, JsonObject> };
  for (const s of Object.values(out.schemas)) {
    delete s['$schema'];
    delete s['$id'];
  }
  return out.schemas;
}
