// The HTML pilot reports and a customer's index page opened in headless Chromium, served from a
// folder over loopback as a static host would: no console error, no request beyond the page, the
// sections in order, both charts drawn to scale against their own axes, a print layout, and a
// full-page screenshot of each under test-output/pilot/.
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPilotFixture, type PilotFixture } from './fixtures.ts';
import { launchChromium, openPage, serveFolder, type Browser, type OpenedPage, type StaticServer } from './browser.ts';
import { chartGeometry, parseBytes, parsePercent, scaleOf, type DomElement } from './chart-geometry.ts';
import { SECTIONS } from './cases.ts';
import { renderCustomerIndexHtml, renderPilotHtml, renderPilotMarkdown } from '../../pilot/render.ts';
import type { PilotReport } from '../../pilot/model.ts';

// The page-side code below runs in Chromium; the project compiles without the DOM library.
declare const document: { querySelector(s: string): DomElement | null; querySelectorAll(s: string): Iterable<DomElement> };
declare function getComputedStyle(e: DomElement): { backgroundColor: string; breakBefore: string; breakInside: string; display: string };

const OUT = fileURLToPath(new URL('../../test-output/pilot/', import.meta.url));
const SITE = path.join(OUT, 'site');

let f: PilotFixture;
let browser: Browser;
let server: StaticServer;

beforeAll(async () => {
  await fs.rm(OUT, { recursive: true, force: true });
  await fs.mkdir(SITE, { recursive: true });
  // Chromium first: when it is missing, say so before spending time on data.
  browser = await launchChromium();
  f = await buildPilotFixture();
  server = await serveFolder(SITE);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await f?.close();
});

const cases = (): [string, PilotReport][] => [
  ['with-control', f.withControl],
  ['without-control', f.withoutControl],
  ['one-bucket', f.oneBucket],
  ['two-buckets', f.twoBuckets],
  ['minute-buckets', f.minuteBuckets],
  ['no-bytes', f.allZero],
];

async function open(name: string, html: string): Promise<OpenedPage & { url: string }> {
  await fs.writeFile(path.join(SITE, `${name}.html`), html);
  const url = `${server.url}/${name}.html`;
  return { ...(await openPage(browser.context, url)), url };
}

describe('the HTML report in Chromium', () => {
  it('renders every case cleanly: no console error, no request beyond the page, every section, both charts, a screenshot', async () => {
    for (const [name, report] of cases()) {
      const o = await open(name, renderPilotHtml(report));
      try {
        expect(o.problems, name).toEqual([]);
        expect(o.requests, name).toEqual([o.url]);
        expect(await o.page.locator('main h2').allTextContents(), name).toEqual(SECTIONS);
        expect(await o.page.title()).toBe(`Pilot report: ${report.streamId}`);
        for (const title of ['Offload ratio over time', 'Bytes from peers vs CDN over time']) {
          const chart = o.page.getByRole('img', { name: title });
          expect(await chart.count(), `${name}: ${title}`).toBe(1);
          const box = (await chart.boundingBox())!;
          expect(box.width, `${name}: ${title}`).toBeGreaterThan(500);
          expect(box.height, `${name}: ${title}`).toBeGreaterThan(150);
        }
        const shot = path.join(OUT, `${name}.png`);
        await o.page.screenshot({ path: shot, fullPage: true });
        const png = await fs.readFile(shot);
        expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), name).toBe(true);
        // Full page: taller than the 900 px viewport (IHDR height at byte 20).
        expect(png.readUInt32BE(20), name).toBeGreaterThan(2000);
      } finally {
        await o.page.close();
      }
    }
  });

  it('draws the bytes to scale: each bar against the axis Chromium shows, peers and CDN per bucket', async () => {
    const report = f.withControl;
    const o = await open('bytes-scale', renderPilotHtml(report));
    try {
      const g = await chartGeometry(o.page, 'chart-bytes');
      const { perUnit } = scaleOf(g.ticks, parseBytes);
      const series = report.results.series;
      expect(g.bars).toHaveLength(series.length);
      g.bars.forEach((bar, i) => {
        // Heights are drawn to a tenth of a unit: allow that, and nothing more.
        expect(Math.abs(bar.peers * perUnit - series[i]!.bytesOffloaded), `bucket ${i} peers`).toBeLessThanOrEqual(0.06 * perUnit);
        expect(Math.abs(bar.cdn * perUnit - series[i]!.bytesFallback), `bucket ${i} CDN`).toBeLessThanOrEqual(0.06 * perUnit);
      });
      const xs = g.bars.map((b) => b.x);
      expect([...xs].sort((a, b) => a - b)).toEqual(xs);
      expect(g.bars.reduce((a, b) => a + b.peers, 0)).toBeGreaterThan(0);
    } finally {
      await o.page.close();
    }
  });

  it('draws the offload line between the lowest and highest bucket ratio on its axis', async () => {
    for (const report of [f.withControl, f.minuteBuckets, f.oneBucket]) {
      const o = await open('offload-scale', renderPilotHtml(report));
      try {
        const g = await chartGeometry(o.page, 'chart-offload');
        const { perUnit, zeroY } = scaleOf(g.ticks, parsePercent);
        const ratios = report.results.series.filter((b) => b.bytesOffloaded + b.bytesFallback > 0).map((b) => b.offloadRatio);
        expect(g.line).not.toBeNull();
        // getBBox is the geometry without the stroke: its top and bottom are the highest and lowest levels.
        expect((zeroY - g.line!.top) * perUnit).toBeCloseTo(Math.max(...ratios), 3);
        expect((zeroY - g.line!.bottom) * perUnit).toBeCloseTo(Math.min(...ratios), 3);
        expect(g.line!.width).toBeGreaterThan(600);
      } finally {
        await o.page.close();
      }
    }
  });

  it('adds neighbouring buckets up when there are too many for one bar each, losing no byte', async () => {
    const report = f.minuteBuckets;
    const o = await open('grouped-bars', renderPilotHtml(report));
    try {
      const g = await chartGeometry(o.page, 'chart-bytes');
      const series = report.results.series;
      expect(series.length).toBe(300);
      expect(g.bars.length).toBeLessThan(series.length);
      const { perUnit } = scaleOf(g.ticks, parseBytes);
      const per = Math.ceil(series.length / g.bars.length);
      g.bars.forEach((bar, i) => {
        const group = series.slice(i * per, (i + 1) * per);
        const total = group.reduce((a, b) => a + b.bytesOffloaded + b.bytesFallback, 0);
        expect(Math.abs((bar.peers + bar.cdn) * perUnit - total), `bar ${i}`).toBeLessThanOrEqual(0.12 * perUnit);
      });
    } finally {
      await o.page.close();
    }
  });

  it('with no bytes at all, the charts say so instead of drawing', async () => {
    const o = await open('no-bytes-charts', renderPilotHtml(f.allZero));
    try {
      for (const id of ['chart-offload', 'chart-bytes']) {
        const g = await chartGeometry(o.page, id);
        expect(g.bars).toEqual([]);
        expect(g.line).toBeNull();
        expect(await o.page.locator(`#${id} text.empty`).textContent()).toBe('No bytes delivered in this period');
      }
    } finally {
      await o.page.close();
    }
  });

  it('says plainly when no control cohort ran, and leaves the operator boxes empty', async () => {
    const o = await open('no-control', renderPilotHtml(f.withoutControl));
    try {
      expect(await o.page.locator('#no-control').textContent()).toContain('No CDN-only control cohort ran');
      expect(await o.page.locator('#control-comparison').count()).toBe(0);
      for (const id of ['#approved-public-claims', '#final-sign-off']) {
        expect((await o.page.locator(`${id} .blank`).innerText()).trim()).toBe('');
        expect((await o.page.locator(`${id} .blank`).boundingBox())!.height).toBeGreaterThan(40);
      }
    } finally {
      await o.page.close();
    }
  });

  it('prints: no background fill, a page per section, tables and charts kept whole, a PDF', async () => {
    const o = await open('print', renderPilotHtml(f.withControl));
    try {
      await o.page.emulateMedia({ media: 'print' });
      const style = await o.page.evaluate(() => {
        const css = (sel: string) => getComputedStyle(document.querySelector(sel)!);
        return {
          body: css('body').backgroundColor,
          sections: [...document.querySelectorAll('main > section')].map((s) => getComputedStyle(s).breakBefore),
          figure: css('figure.chart').breakInside,
          criteria: css('#criteria').breakInside,
          nav: css('nav.toc').display,
          backgrounds: [...document.querySelectorAll('body *')].map((e) => getComputedStyle(e).backgroundColor).filter((c) => c !== 'rgba(0, 0, 0, 0)'),
        };
      });
      expect(style.body).toBe('rgba(0, 0, 0, 0)');
      expect(style.backgrounds).toEqual([]);
      expect(style.sections).toEqual(['auto', ...Array(SECTIONS.length - 1).fill('page')]);
      expect(style.figure).toBe('avoid');
      expect(style.criteria).toBe('avoid');
      expect(style.nav).toBe('none');
      const chart = (await o.page.getByRole('img', { name: 'Bytes from peers vs CDN over time' }).boundingBox())!;
      expect(chart.height).toBeGreaterThan(150);
      const pdf = await o.page.pdf({ path: path.join(OUT, 'with-control.pdf'), format: 'A4' });
      const pages = pdf.toString('latin1').match(/\/Type\s*\/Page(?![s\w])/g) ?? [];
      expect(pages.length).toBeGreaterThanOrEqual(SECTIONS.length);
      expect(o.problems).toEqual([]);
    } finally {
      await o.page.close();
    }
  });
});

describe('the static site of a customer in Chromium', () => {
  it('links each stream to its report in the three formats, relative to the index page', async () => {
    const folder = path.join(SITE, 'acme');
    await fs.mkdir(folder, { recursive: true });
    const reports = [...f.reports.values()].filter((r) => r.customerId === 'acme');
    for (const r of reports) {
      await fs.writeFile(path.join(folder, `${r.streamId}.json`), JSON.stringify(r));
      await fs.writeFile(path.join(folder, `${r.streamId}.md`), renderPilotMarkdown(r));
      await fs.writeFile(path.join(folder, `${r.streamId}.html`), renderPilotHtml(r));
    }
    const html = renderCustomerIndexHtml({
      customerId: 'acme',
      tenantName: 'ACME Streaming',
      snapshot: f.snapshot,
      reports: reports.map((r) => ({
        streamId: r.streamId,
        assessment: r.conclusion.assessment,
        sessions: r.results.sessions,
        offloadRatio: r.results.offloadRatio,
        netSavings: r.cost.netSavings,
        files: { json: `${r.streamId}.json`, md: `${r.streamId}.md`, html: `${r.streamId}.html` },
      })),
    });
    await fs.writeFile(path.join(folder, 'index.html'), html);
    const o = await openPage(browser.context, `${server.url}/acme/index.html`);
    try {
      expect(o.problems).toEqual([]);
      expect(o.requests).toEqual([`${server.url}/acme/index.html`]);
      const rows = await o.page.locator('#reports tbody tr').count();
      expect(rows).toBe(reports.length);
      await o.page.screenshot({ path: path.join(OUT, 'index-acme.png'), fullPage: true });
      // Every link, resolved by the browser, is a file of the folder, served as is.
      const links = await o.page.locator('#reports a').evaluateAll((as) => as.map((a) => (a as unknown as DomElement).href));
      expect(links).toHaveLength(4 * reports.length);
      for (const link of links) {
        expect(link.startsWith(`${server.url}/acme/`), link).toBe(true);
        const res = await fetch(link);
        expect(res.status, link).toBe(200);
        const file = path.join(folder, decodeURIComponent(link.slice(`${server.url}/acme/`.length)));
        expect(await res.text()).toBe(await fs.readFile(file, 'utf8'));
      }
      // And a click opens the report.
      await o.page.locator('#reports th a').first().click();
      await o.page.waitForLoadState('load');
      expect(await o.page.locator('h1').textContent()).toBe(`Pilot report: ${[...reports].sort((a, b) => a.streamId.localeCompare(b.streamId))[0]!.streamId}`);
      expect(o.problems).toEqual([]);
    } finally {
      await o.page.close();
    }
  });
});

describe('the checks themselves', () => {
  it('would see a request beyond the page and a blocked script', async () => {
    // Not a report: a page that breaks both rules, to show the recorder catches each.
    const o = await open(
      'canary',
      `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${server.url}"></head>` +
        `<body><img src="${server.url}/missing.png" alt=""><script>document.title = 'ran'</script></body></html>`,
    );
    try {
      expect(o.requests).toContain(`${server.url}/missing.png`);
      expect(o.problems.some((p) => p.includes('Content Security Policy'))).toBe(true);
      expect(await o.page.title()).not.toBe('ran');
    } finally {
      await o.page.close();
    }
  });
});
