// Request bodies: JSON only (415 otherwise), at most 64 KiB (413, refused from Content-Length
// before reading when it says so), at most 32 levels deep, parsed or 400.
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { ApiError } from '../lib/http/problem.ts';
import { problems } from '../served/problems.ts';

export const MAX_BODY_BYTES = 64 * 1024;
/** Deepest nesting of arrays and objects a body may have (JSON.parse itself accepts any depth). */
export const MAX_JSON_DEPTH = 32;

/** Whether JSON text nests arrays/objects deeper than `max`, by a scan that builds nothing. */
export function jsonDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

export async function readJsonBody(ctx: Context, limit = MAX_BODY_BYTES): Promise<unknown> {
  const type = (ctx.get('Content-Type') || '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw problems.unsupportedMediaType();
  const declared = Number(ctx.get('Content-Length') || NaN);
  if (Number.isFinite(declared) && declared > limit) throw problems.payloadTooLarge(limit);
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit, encoding: 'utf8', length: Number.isFinite(declared) ? declared : undefined });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw problems.payloadTooLarge(limit);
    throw problems.invalidQuery('invalid_body', 'The body could not be read.');
  }
  if (jsonDeeperThan(text, MAX_JSON_DEPTH)) throw problems.bodyTooDeep(MAX_JSON_DEPTH);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, 'invalid_json', 'Invalid JSON', 'The body is not valid JSON.');
  }
}
