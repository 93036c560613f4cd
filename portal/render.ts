// Rendering portal pages with nunjucks (templates/portal/), autoescaped: every value from an SDK
// (stream names, regions, devices, versions) is text, never markup. A page asked for as a fragment
// (the live update of an open page) is its <main> alone.
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import nunjucks from 'nunjucks';
import type { Context } from 'koa';
import { TEMPLATES_DIR } from '../pilot/render.ts';
import { formatSeconds, formatUtc } from '../pilot/human-format.ts';
import type { PortalAssets } from './assets.ts';

let env: nunjucks.Environment | null = null;

function environment(): nunjucks.Environment {
  if (env) return env;
  const loader = new nunjucks.FileSystemLoader(path.join(TEMPLATES_DIR, 'portal'), { noCache: false, watch: false });
  env = new nunjucks.Environment(loader, { autoescape: true, throwOnUndefined: false, trimBlocks: true, lstripBlocks: true });
  env.addFilter('utc', (iso: string | null | undefined) => formatUtc(iso));
  env.addFilter('seconds', (s: number) => formatSeconds(s));
  // For a <script type="application/json"> data block: no `<` can close it early.
  env.addFilter('json', (v: unknown) => JSON.stringify(v ?? null).replace(/</g, '\\u003c'));
  return env;
}

/** Whether the request asks for the page's <main> only (an open page's live update). */
export function wantsFragment(ctx: Context): boolean {
  return ctx.get('X-Portal-Fragment') === 'main';
}

export function renderPage(ctx: Context, assets: PortalAssets, template: string, view: Record<string, unknown>, status = 200): void {
  sendPage(ctx, pageHtml(assets, template, view, wantsFragment(ctx)), status);
}

/** A page's HTML: the whole page, or its <main> alone (`fragment`). */
export function pageHtml(assets: PortalAssets, template: string, view: Record<string, unknown>, fragment: boolean): string {
  return environment().render(`${template}.njk`, { ...view, fragment, layout: fragment ? 'fragment.njk' : 'layout.njk', assets: { script: assets.script.name, style: assets.style.name } });
}

/** Sends a page's HTML, gzip'd when the browser takes it. */
export function sendPage(ctx: Context, html: string, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'private, no-store');
  ctx.set('Vary', 'X-Portal-Fragment, Accept-Encoding');
  // A page is a few tens of KB of repetitive markup: gzip'd it is a fifth of that (level 6: ~1 ms).
  if (html.length >= GZIP_FROM_CHARS && /\bgzip\b/.test(ctx.get('Accept-Encoding'))) {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = gzipSync(html);
    return;
  }
  ctx.body = html;
}

const GZIP_FROM_CHARS = 1024;
