// Reading an ingest request's body within its limits: the media type (JSON, NDJSON, or text/plain
// holding JSON for sendBeacon), the encoding (gzip or none), and the size on the wire (refused from
// Content-Length before reading). What the body holds (inflated within its limit, parsed, counted,
// checked) is collector/batch.ts's work.
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { ingestProblems } from './problems.ts';

export interface BodyLimits {
  maxBodyBytes: number;
}

const MEDIA_TYPES = new Set(['application/json', 'application/x-ndjson', 'application/ndjson', 'text/plain']);

export function mediaType(ctx: Context): string {
  return (ctx.get('Content-Type') || '').split(';')[0]!.trim().toLowerCase();
}

/** Check what can be checked from the headers alone, before a byte of the body is read. */
export function checkHeaders(ctx: Context, limits: BodyLimits): void {
  // Node reads a chunked body whatever codings are listed before `chunked`, and would hand over a
  // body still in them: any coding but `chunked` alone is refused (RFC 9112: 501).
  const transfer = ctx.get('Transfer-Encoding');
  if (transfer !== '' && transfer.trim().toLowerCase() !== 'chunked') throw ingestProblems.unsupportedTransferEncoding();
  if (!MEDIA_TYPES.has(mediaType(ctx))) throw ingestProblems.unsupportedMediaType();
  const encoding = (ctx.get('Content-Encoding') || 'identity').trim().toLowerCase();
  if (encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'x-gzip') throw ingestProblems.unsupportedEncoding();
  const declared = Number(ctx.get('Content-Length') || NaN);
  if (Number.isFinite(declared) && declared > limits.maxBodyBytes) throw ingestProblems.tooLarge(`The body is larger than ${limits.maxBodyBytes} bytes.`);
}

/** Whether the body is gzip'd (checkHeaders refused any other encoding). */
export function gzipped(ctx: Context): boolean {
  return (ctx.get('Content-Encoding') || 'identity').trim().toLowerCase() !== 'identity';
}

/** The body as sent, within its size on the wire (collector/batch.ts reads what it holds). */
export async function readBody(ctx: Context, limits: BodyLimits): Promise<Buffer> {
  const declared = Number(ctx.get('Content-Length') || NaN);
  try {
    return await getRawBody(ctx.req, { limit: limits.maxBodyBytes, length: Number.isFinite(declared) ? declared : undefined });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw ingestProblems.tooLarge(`The body is larger than ${limits.maxBodyBytes} bytes.`);
    throw ingestProblems.unreadableBody('The body could not be read.');
  }
}
