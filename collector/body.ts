// Reading an ingest request's body within its limits: the media type (JSON, NDJSON, or text/plain
// holding JSON for sendBeacon), gzip, the size on the wire (refused from Content-Length before
// reading), the size once inflated (inflating stops at the limit, so a gzip bomb costs at most
// that much memory), and the report count. What comes out is one item per report, parsed or not.
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { ingestProblems } from './problems.ts';

const gunzipAsync = promisify(gunzip);

export interface BodyLimits {
  maxBodyBytes: number;
  maxInflatedBytes: number;
  maxReports: number;
}

/** A report as it came: parsed, or the reason its line could not be (NDJSON only). */
export type BodyItem = { ok: true; value: unknown } | { ok: false; reason: string };

const MEDIA_TYPES = new Set(['application/json', 'application/x-ndjson', 'application/ndjson', 'text/plain']);

export function mediaType(ctx: Context): string {
  return (ctx.get('Content-Type') || '').split(';')[0]!.trim().toLowerCase();
}

/** Check what can be checked from the headers alone, before a byte of the body is read. */
export function checkHeaders(ctx: Context, limits: BodyLimits): void {
  if (!MEDIA_TYPES.has(mediaType(ctx))) throw ingestProblems.unsupportedMediaType();
  const encoding = (ctx.get('Content-Encoding') || 'identity').trim().toLowerCase();
  if (encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'x-gzip') throw ingestProblems.unsupportedEncoding();
  const declared = Number(ctx.get('Content-Length') || NaN);
  if (Number.isFinite(declared) && declared > limits.maxBodyBytes) throw ingestProblems.tooLarge(`The body is larger than ${limits.maxBodyBytes} bytes.`);
}

export async function readReports(ctx: Context, limits: BodyLimits): Promise<BodyItem[]> {
  const declared = Number(ctx.get('Content-Length') || NaN);
  let raw: Buffer;
  try {
    raw = await getRawBody(ctx.req, { limit: limits.maxBodyBytes, length: Number.isFinite(declared) ? declared : undefined });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw ingestProblems.tooLarge(`The body is larger than ${limits.maxBodyBytes} bytes.`);
    throw ingestProblems.unreadableBody('The body could not be read.');
  }
  const encoding = (ctx.get('Content-Encoding') || 'identity').trim().toLowerCase();
  let body: Buffer = raw;
  if (encoding !== 'identity') {
    try {
      body = await gunzipAsync(raw, { maxOutputLength: limits.maxInflatedBytes });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
        throw ingestProblems.tooLarge(`The body is larger than ${limits.maxInflatedBytes} bytes once decompressed.`);
      }
      throw ingestProblems.unreadableBody('Content-Encoding says gzip, but the body is not valid gzip.');
    }
  } else if (body.length > limits.maxInflatedBytes) {
    throw ingestProblems.tooLarge(`The body is larger than ${limits.maxInflatedBytes} bytes.`);
  }
  const text = body.toString('utf8');
  const items = mediaType(ctx).endsWith('ndjson') ? ndjsonItems(text, limits) : jsonItems(text);
  if (items.length > limits.maxReports) throw ingestProblems.tooManyReports(limits.maxReports);
  return items;
}

function jsonItems(text: string): BodyItem[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw ingestProblems.invalidJson('The body is not valid JSON.');
  }
  const list = Array.isArray(json) ? json : isObject(json) && Array.isArray(json['reports']) ? json['reports'] : null;
  if (list === null) throw ingestProblems.invalidJson('The body must be {"reports": [...]} or a JSON array of reports.');
  return list.map((value) => ({ ok: true, value }));
}

function ndjsonItems(text: string, limits: BodyLimits): BodyItem[] {
  const items: BodyItem[] = [];
  let parsed = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    // Counted before parsing: a body of too many lines is refused without parsing them all.
    if (items.length >= limits.maxReports) return [...items, { ok: false, reason: 'over the limit' }];
    try {
      items.push({ ok: true, value: JSON.parse(line) });
      parsed++;
    } catch {
      items.push({ ok: false, reason: 'this line is not valid JSON' });
    }
  }
  if (items.length > 0 && parsed === 0) throw ingestProblems.invalidJson('No line of the body is valid JSON.');
  return items;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
