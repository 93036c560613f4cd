// Request bodies: JSON only (415 otherwise), at most 64 KiB (413, refused from Content-Length
// before reading when it says so), parsed or 400.
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { ApiError, problems } from './errors.ts';

export const MAX_BODY_BYTES = 64 * 1024;

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
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, 'invalid_json', 'Invalid JSON', 'The body is not valid JSON.');
  }
}
