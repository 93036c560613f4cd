// Headless Debian Chromium for the HTML report and portal tests (playwright-core drives it; no browser is
// downloaded), a static file server on loopback to open pages from, and a recorder of what a page
// logs, throws and fetches.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  /**
   * A page in a context of its own: its own cookie jar, so that signing in or out on one page never
   * touches another's session (closing the page closes its context).
   */
  isolatedPage(): Promise<Page>;
  close(): Promise<void>;
}

/** Chromium with a fresh profile folder, removed on close. Fails with how to install it when missing. */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}: the HTML pilot-report tests open the page in headless Chromium. ` +
        'Install Debian\'s package with "apt-get install -y chromium" (.ci/run does it); do not run "npx playwright install".',
    );
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  try {
    const context = await browser.newContext({ viewport: VIEWPORT });
    return {
      context,
      async isolatedPage() {
        const own = await browser.newContext({ viewport: VIEWPORT });
        const page = await own.newPage();
        page.once('close', () => void own.close().catch(() => {}));
        return page;
      },
      close: () => browser.close(),
    };
  } catch (err) {
    await browser.close();
    throw err;
  }
}

const VIEWPORT = { width: 1100, height: 900 };

export interface StaticServer {
  url: string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.md': 'text/markdown; charset=utf-8', '.json': 'application/json' };

/** Files under `root` over HTTP on loopback, as any static host would serve the published site. */
export async function serveFolder(root: string): Promise<StaticServer> {
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const file = path.join(root, rel);
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

export interface OpenedPage {
  page: Page;
  /** Console errors and warnings, uncaught exceptions, failed requests. */
  problems: string[];
  /** Every URL the page asked for, the page itself included. */
  requests: string[];
}

/** Open `url` in a new tab, recording everything from before the first byte. */
export async function openPage(context: BrowserContext, url: string): Promise<OpenedPage> {
  const page = await context.newPage();
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  page.on('request', (r) => requests.push(r.url()));
  const response = await page.goto(url, { waitUntil: 'load' });
  if (!response || response.status() !== 200) problems.push(`page ${url} answered ${response?.status() ?? 'nothing'}`);
  return { page, problems, requests };
}
