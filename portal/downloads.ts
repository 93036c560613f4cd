// A stream's files as the portal hands them to a browser: its pilot report (HTML, Markdown, JSON)
// and its exports (every format of the export route), passed through from the API as they stream,
// with the API's status and download headers. The HTML report keeps the portal's strict policy: its
// one inline stylesheet is allowed by its hash, not by 'unsafe-inline'.
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { EXPORT_FORMATS } from '../api/export/export.ts';
import { sessionOf } from './sign-in.ts';
import type { PortalDeps } from './deps.ts';
import { clientGone } from './client-gone.ts';

const REPORT_FORMATS = ['html', 'md', 'json', 'jws'] as const;
const PASSED_HEADERS = ['content-type', 'content-disposition', 'etag', 'last-modified', 'content-length'];

export async function reportDownload(ctx: Context, deps: PortalDeps, streamId: string, format: string): Promise<void> {
  if (!(REPORT_FORMATS as readonly string[]).includes(format)) return void (ctx.status = 404);
  // `?source=published`: the latest published report (what the verdict shown came from).
  const source = ctx.query['source'] === 'published' ? '&source=published' : '';
  const path = `/control/reports/pilot/${encodeURIComponent(streamId)}?format=${format}${source}`;
  return passThrough(ctx, deps, path, format === 'html' ? reportPolicy : undefined);
}

export async function exportDownload(ctx: Context, deps: PortalDeps, streamId: string): Promise<void> {
  const format = String(ctx.query['format'] ?? 'csv');
  const window = String(ctx.query['window'] ?? '24h');
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) return void (ctx.status = 404);
  await passThrough(ctx, deps, `/telemetry/export?streamId=${encodeURIComponent(streamId)}&window=${encodeURIComponent(window)}&format=${format}`);
}

/** The HTML report's policy: nothing but its own inline stylesheet (by hash) and data: images. */
function reportPolicy(html: string): string {
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`);
  return `default-src 'none'; style-src ${styles.join(' ') || "'none'"}; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
}

async function passThrough(ctx: Context, deps: PortalDeps, path: string, policyOf?: (html: string) => string): Promise<void> {
  const { token } = sessionOf(ctx);
  const signal = clientGone(ctx);
  const res = await deps.api.stream(path, token, signal);
  ctx.status = res.status;
  for (const h of PASSED_HEADERS) {
    const v = res.headers.get(h);
    if (v !== null) ctx.set(h, v);
  }
  ctx.set('Cache-Control', 'private, no-store');
  if (policyOf && res.body && res.status === 200) {
    const chunks: Buffer[] = [];
    for await (const c of res.body) chunks.push(c as Buffer);
    const html = Buffer.concat(chunks);
    ctx.set('Content-Security-Policy', policyOf(html.toString('utf8')));
    ctx.body = html;
    return;
  }
  if (res.body) {
    const body = res.body;
    ctx.res.once('close', () => body.destroy());
    ctx.body = body;
  }
}
