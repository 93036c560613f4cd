// Headless Debian Chromium for the HTML report tests (playwright-core drives it; no browser is
// downloaded), a static file server on loopback to open pages from, and a recorder of what a page
// logs, throws and fetches.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
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
  const userDataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'p2ptel-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1100, height: 900 },
    });
    return {
      context,
      async close() {
        await context.close();
        await fsp.rm(userDataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await fsp.rm(userDataDir, { recursive: true, force: true });
    throw err;
  }
}

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
