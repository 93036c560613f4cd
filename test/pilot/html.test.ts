// The HTML rendering of real pilot reports, read as text: one self-contained page (no script, no
// external URL, a CSP), escaping of data, charts and operator boxes in place; the customer index
// page's links; and the same bytes on every render of every format.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPilotFixture, type PilotFixture } from './fixtures.ts';
import { everyReport, indexFor, poisoned, SECTIONS } from './cases.ts';
import { renderCustomerIndexHtml, renderPilotHtml, renderPilotMarkdown, relativeHref, IndexLinkError } from '../../pilot/render.ts';
import type { PilotReport } from '../../pilot/model.ts';

let f: PilotFixture;
beforeAll(async () => {
  f = await buildPilotFixture();
});
afterAll(async () => {
  await f?.close();
});

describe('HTML, statically', () => {
  it('is one self-contained page: no script, no external URL, no fetched asset, a CSP that refuses fetches', () => {
    for (const [name, report] of everyReport(f)) {
      const html = renderPilotHtml(report);
      expect(html, name).toMatch(/^<!DOCTYPE html>\n<html lang="en">/);
      expect(html, name).not.toMatch(/<script/i);
      expect(html, name).not.toMatch(/\son[a-z]+\s*=/i);
      expect(html, name).not.toMatch(/<(?:link|img|iframe|object|embed|base|audio|video|source)\b/i);
      expect(html, name).not.toMatch(/@import/i);
      // Every src, href and url() is in-page: no scheme (http, https, javascript, data...), no //.
      for (const m of html.matchAll(/(?:\b(?:src|href|xlink:href)\s*=\s*["']?|url\(\s*["']?)([^"'\s)>]*)/gi)) {
        expect(m[1], `${name}: ${m[0]}`).toMatch(/^#[\w-]+$/);
      }
      expect(html, name).not.toMatch(/https?:\/\//i);
      expect(html, name).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'`);
      expect(html, name).toContain('@media print');
      for (const s of SECTIONS) expect(html, `${name}: ${s}`).toContain(`>${s}</h2>`);
      expect(html, name).not.toMatch(/\bnull\b|\bundefined\b|NaN|Infinity|\[object/);
    }
  });

  it('escapes text from data, in the page and in the charts', () => {
    const hostile: PilotReport = structuredClone(f.withControl);
    hostile.streamId = 'acme:<script>alert(1)</script>';
    hostile.configuration.sdkVersions[0]!.version = '"><img src=x onerror=alert(1)>';
    const html = renderPilotHtml(hostile);
    expect(html).not.toMatch(/<script|<img|onerror=alert\(1\)>/i);
    expect(html).toContain('Pilot report: acme:&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
  });

  it('escapes every text from data, wherever it appears', () => {
    const html = renderPilotHtml(poisoned(f.withControl));
    expect(html.split('&lt;x-evil a=&quot;1&quot;&gt;').length).toBeGreaterThan(20);
    expect(html).not.toContain('<x-evil');
  });

  it('has both charts inline, as accessible images, and the operator boxes empty', () => {
    const html = renderPilotHtml(f.withControl);
    expect(html).toMatch(/<svg class="chart" id="chart-offload"[^>]* role="img" aria-labelledby="chart-offload-title"/);
    expect(html).toMatch(/<svg class="chart" id="chart-bytes"[^>]* role="img" aria-labelledby="chart-bytes-title"/);
    expect(html).toMatch(/<div class="label">Approved public claims:<\/div><div class="blank">(?:<div class="line"><\/div>)+<\/div>/);
    expect(html).toMatch(/<div class="label">Final pass\/fail sign-off:<\/div><div class="blank">(?:<div class="line"><\/div>)+<\/div>/);
  });
});

describe('Customer index page', () => {
  it('links each stream to its three files by relative, encoded links, in stream order', () => {
    const html = renderCustomerIndexHtml(indexFor(f, 'acme', 'ACME <Streaming>', 'reports/'));
    const ids = [...f.reports.keys()].filter((id) => id.startsWith('acme:')).sort();
    expect(ids.length).toBeGreaterThan(1);
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
    // A ':' would read as a URL scheme ("acme:" …): it is percent-encoded.
    expect(hrefs).toEqual(ids.flatMap((id) => {
      const e = id.replace(':', '%3A');
      return [`reports/${e}.html`, `reports/${e}.html`, `${e}.md`, `${e}.json`];
    }));
    expect(html).toContain('<title>Pilot reports: ACME &lt;Streaming&gt;</title>');
    expect(html).not.toMatch(/<script|https?:\/\//i);
  });

  it('refuses absolute links, which would break once the site is copied elsewhere', () => {
    expect(() => relativeHref('/reports/a.html')).toThrow(IndexLinkError);
    expect(() => relativeHref('reports\\a.html')).toThrow(IndexLinkError);
    expect(relativeHref('sub dir/a:b#c.html')).toBe('sub%20dir/a%3Ab%23c.html');
  });
});

describe('determinism', () => {
  it('the same report renders to the same bytes, from a copy, in another time zone', () => {
    const tz = process.env['TZ'];
    for (const [name, report] of everyReport(f)) {
      const md = renderPilotMarkdown(report);
      const html = renderPilotHtml(report);
      expect(renderPilotMarkdown(report), name).toBe(md);
      expect(renderPilotHtml(structuredClone(report)), name).toBe(html);
      try {
        process.env['TZ'] = 'Pacific/Chatham';
        expect(renderPilotMarkdown(structuredClone(report)), name).toBe(md);
        expect(renderPilotHtml(report), name).toBe(html);
      } finally {
        if (tz === undefined) delete process.env['TZ'];
        else process.env['TZ'] = tz;
      }
    }
    expect(renderCustomerIndexHtml(structuredClone(indexFor(f, 'globex', null)))).toBe(renderCustomerIndexHtml(indexFor(f, 'globex', null)));
  });
});
