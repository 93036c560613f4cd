// `npm run docs:portal`: the screenshots of docs/portal.md, taken anew. Starts `p2ptel start` on a
// fresh warehouse of sample data, signs in with the link it prints (and as an operator with a token
// of its own), and saves each page as it looks in Debian's Chromium into docs/portal/.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { PROJECT_ROOT } from '../lib/version.ts';

const OUT = path.join(PROJECT_ROOT, 'docs', 'portal');
const CLI = path.join(PROJECT_ROOT, 'bin', 'p2ptel.js');

async function startServer(warehouse: string): Promise<{ text: () => string; stop: () => void }> {
  const child = spawn(process.execPath, [CLI, 'start', '--warehouse', warehouse, '--port', '0', '--collector-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const started = Date.now();
  while (!/session-reports"\n/.test(out)) {
    if (child.exitCode !== null || Date.now() - started > 180_000) throw new Error(`start did not come up:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { text: () => out, stop: () => child.kill('SIGTERM') };
}

async function shoot(page: Page, url: string, name: string): Promise<void> {
  await page.goto(url);
  await page.waitForTimeout(600);
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
  process.stdout.write(`docs/portal/${name}.png\n`);
}

async function main(): Promise<void> {
  const warehouse = fs.mkdtempSync(path.join(os.tmpdir(), 'p2ptel-portal-shots-'));
  const server = await startServer(warehouse);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  try {
    const text = server.text();
    const base = /API listening on (\S+)/.exec(text)![1]!;
    const link = /portal: open (\S+)/.exec(text)![1]!;
    fs.mkdirSync(OUT, { recursive: true });
    const tenant = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await shoot(tenant, `${base}/portal/login`, 'login');
    await tenant.goto(link);
    await tenant.waitForURL(`${base}/portal/`);
    await shoot(tenant, `${base}/portal/`, 'overview');
    await shoot(tenant, `${base}/portal/streams/acme%3Alive-main?by=region&filter=device%3Amobile`, 'stream');
    await shoot(tenant, `${base}/portal/reports`, 'reports');
    await shoot(tenant, `${base}/portal/origins`, 'origins');
    const operatorToken = execFileSync(process.execPath, [CLI, 'token', '--role', 'operator', '--warehouse', warehouse]).toString().trim();
    const operator = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await operator.goto(`${base}/portal/login`);
    await operator.fill('#token', operatorToken);
    await operator.click('button[type=submit]');
    await operator.waitForURL(`${base}/portal/`);
    await shoot(operator, `${base}/portal/`, 'platform');
    await shoot(operator, `${base}/portal/tenants`, 'tenants');
    await shoot(operator, `${base}/portal/billing`, 'billing');
  } finally {
    await browser.close();
    server.stop();
    setTimeout(() => fs.rmSync(warehouse, { recursive: true, force: true }), 2_000);
  }
}

await main();
