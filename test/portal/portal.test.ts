// The portal in a real browser (Debian's Chromium driven by playwright-core) against a real `start`
// process: sign-in with the printed link and with a token, figures equal to the JSON routes' for
// the same window, a posted report shown on an open page without a reload, filters from a
// breakdown click in the URL and Back, the origins form, scoping (another tenant's stream is 403),
// sign-out and revocation, an SDK value that is markup shown as text, the security headers and
// CSRF checks, the operator's pages, keyboard use and axe's accessibility rules.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from '../pilot/browser.ts';
import { postReport, startPortal, tileValues, type StartedPortal } from '../helpers/portal.ts';
import { cli } from '../helpers/cli.ts';
import { eventually } from '../helpers/child-api.ts';
import { formatBytes, formatInteger, formatMs, formatPercent } from '../../pilot/human-format.ts';

// A page of a loaded machine (three test files, Chromium and start's own live rollups on two cores)
// can take tens of seconds to come: generous bounds, never a timing assertion.
vi.setConfig({ testTimeout: 150_000 });
const NAVIGATION = { waitUntil: 'commit', timeout: 90_000 } as const;

let portal: StartedPortal;
let browser: Browser;
let operatorToken: string;
let globexToken: string;

beforeAll(async () => {
  portal = await startPortal();
  browser = await launchChromium();
  const w = ['--warehouse', portal.warehouse];
  operatorToken = (await cli(['token', '--role', 'operator', ...w])).stdout.trim();
  expect((await cli(['tenants', 'add', '--customer', 'globex', '--name', 'Globex', ...w])).code).toBe(0);
  globexToken = (await cli(['token', '--customer', 'globex', ...w])).stdout.trim();
}, 180_000);

// A failed test shows what `start` said (its log lines name each sign-in, refusal and slow read).
afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(`start's output, last 4,000 characters:\n${portal.output().slice(-4000)}`);
});

afterAll(async () => {
  await browser?.close();
  await portal?.stop();
});

async function api<T>(path: string, token = portal.token): Promise<T> {
  const res = await fetch(`${portal.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

/** A fresh browser page (its own cookie jar) signed in with `token` through the form. */
async function signedIn(token: string): Promise<Page> {
  const page = await browser.isolatedPage();
  await page.goto(`${portal.url}/portal/login`);
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.waitForURL(`${portal.url}/portal/`, NAVIGATION);
  await page.waitForLoadState('domcontentloaded', { timeout: 90_000 });
  return page;
}

/** The file's shared browser sessions, by token: the page that signed in, left on a blank page (its context holds the cookie). */
const sessions = new Map<string, Promise<Page>>();

/**
 * A new page at the overview, in a browser session signed in with `token` through the form once
 * for the file: the tests that only read share it (signing in is tested under "signing in"; the
 * tests that end a session sign in on their own, `signedIn`). A sign-in took two more requests,
 * a context and a rendered overview in Chromium and in `start` for each test.
 */
async function sessionPage(token: string): Promise<Page> {
  let anchor = sessions.get(token);
  if (!anchor) {
    anchor = signedIn(token).then(async (p) => {
      await p.goto('about:blank');
      return p;
    });
    sessions.set(token, anchor);
  }
  const page = await (await anchor).context().newPage();
  await page.goto(`${portal.url}/portal/`, NAVIGATION);
  await page.waitForLoadState('domcontentloaded', { timeout: 90_000 });
  return page;
}

describe('signing in', () => {
  it('signs in once with the printed link, whose code never reaches the server in a URL', async () => {
    const page = await browser.isolatedPage();
    const seen: string[] = [];
    page.on('request', (r) => seen.push(r.url()));
    const answers: string[] = [];
    page.on('response', (r) => void r.allHeaders().then((h) => answers.push(`${r.request().method()} ${r.url()} ${r.status()} ${h['set-cookie'] ?? ''}`)));
    await page.goto(portal.signInLink);
    await page.waitForURL(`${portal.url}/portal/`, NAVIGATION);
    expect(await page.textContent('h1')).toContain('Overview of acme');
    const code = new URL(portal.signInLink).hash.slice('#code='.length);
    expect(seen.some((u) => u.includes(code))).toBe(false);
    expect(portal.output()).not.toContain(`code=${code}"`);
    // The cookie: HttpOnly, SameSite=Strict, Path=/portal.
    const [cookie] = (await page.context().cookies()).filter((c) => c.name === 'p2ptel_portal');
    expect(cookie, answers.join('\n')).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/portal' });
    // A second use of the link is refused on the form.
    await page.context().clearCookies();
    await page.goto(portal.signInLink);
    await page.waitForSelector('.error');
    expect(await page.textContent('.error')).toContain('used already or has expired');
    await page.close();
  });

  it('takes a form from each of two tabs of one browser', async () => {
    const first = await browser.isolatedPage();
    const second = await first.context().newPage();
    for (const p of [first, second]) await p.goto(`${portal.url}/portal/login`);
    for (const p of [first, second]) {
      await p.fill('#token', portal.token);
      await p.click('button[type=submit]');
      await p.waitForURL(`${portal.url}/portal/`, NAVIGATION);
    }
    await first.close();
  });

  it('refuses a wrong token on the form, and throttles refused sign-ins', async () => {
    const page = await browser.isolatedPage();
    const asked: string[] = [];
    page.on('request', (r) => asked.push(new URL(r.url()).pathname));
    await page.goto(`${portal.url}/portal/login`);
    await page.fill('#token', 'not-a-token');
    await page.click('button[type=submit]');
    await page.waitForSelector('.error');
    expect(await page.textContent('.error')).toContain('not a valid API token');
    expect(await page.context().cookies()).not.toContainEqual(expect.objectContaining({ name: 'p2ptel_portal' }));
    // The form is no live page: it opens no event stream (whose refusal, answered after a sign-in,
    // would clear the session just set).
    expect(asked).not.toContain('/portal/events');
    await page.close();
  });
});

describe('the overview', () => {
  it("shows the JSON routes' figures for the same window, and the tenant's streams only", async () => {
    const page = await sessionPage(portal.token);
    for (const window of ['24h', '1h']) {
      await page.goto(`${portal.url}/portal/?window=${window}`);
      const asOf = await page.getAttribute('main', 'data-as-of');
      const s = await api<Record<string, number>>(`/telemetry/summary?window=${window}`);
      if (s['asOf'] as unknown as string !== asOf) continue; // a snapshot swapped between the two reads: the next window checks
      const tiles = await tileValues(page);
      expect(tiles).toMatchObject({
        sessions: formatInteger(s['totalSessions']),
        'active-peers': formatInteger(s['activePeers']),
        'bytes-p2p': formatBytes(s['totalBytesOffloaded']),
        'bytes-cdn': formatBytes(s['totalBytesFallback']),
        offload: formatPercent(s['avgOffloadRatio']),
        rebuffer: formatPercent(s['rebufferRatio'], 2),
        startup: formatMs(s['startupTimeP95Ms']),
        'p2p-success': formatPercent(s['p2pConnectionSuccess']),
      });
      const rows = await page.$$eval('table.streams tbody th a', (as) => as.map((a) => a.textContent));
      const listed = await api<{ streams: string[] }>(`/telemetry/streams?window=${window}`);
      expect([...rows].sort()).toEqual(listed.streams);
      expect(rows.every((r) => r!.startsWith('acme:'))).toBe(true);
    }
    await page.close();
  });

  it("shows each tile's change against the API's previous period", async () => {
    const page = await sessionPage(portal.token);
    await page.goto(`${portal.url}/portal/?window=24h`);
    const asOf = await page.getAttribute('main', 'data-as-of');
    const [now, before] = await Promise.all([
      api<Record<string, number> & { asOf: string }>('/telemetry/summary?window=24h'),
      api<Record<string, number> & { asOf: string; period: string }>('/telemetry/summary?window=24h&period=previous'),
    ]);
    expect(before.period).toBe('previous');
    const changes = await page.$$eval('.tile', (tiles) => Object.fromEntries(tiles.map((t) => [t.id.replace('tile-', ''), t.querySelector('.tile-change')?.textContent?.trim()])));
    if (now.asOf === asOf && before.asOf === asOf && before['totalSessions']! > 0) {
      const pct = (a: number, b: number) => { const r = (a - b) / b; return `${r > 0 ? '+' : ''}${(r * 100).toFixed(1)} % vs previous period`; };
      expect(changes['sessions']).toBe(pct(now['totalSessions']!, before['totalSessions']!));
      expect(changes['bytes-p2p']).toBe(pct(now['totalBytesOffloaded']!, before['totalBytesOffloaded']!));
      for (const id of ['offload', 'rebuffer', 'startup', 'p2p-success']) expect(changes[id], id).toMatch(/vs previous period$/);
    }
    // The window `all` has no previous period.
    await page.goto(`${portal.url}/portal/?window=all`);
    expect(await page.textContent('#tile-sessions .tile-change')).toBe('no previous-period figure');
    await page.close();
  });

  it("filters the streams table and the chart with the page's filters", async () => {
    const page = await sessionPage(portal.token);
    await page.goto(`${portal.url}/portal/?window=24h&filter=device%3Amobile`);
    const asOf = await page.getAttribute('main', 'data-as-of');
    const listed = await api<{ asOf: string; streams: { streamId: string; totalSessions: number }[] }>('/telemetry/streams?window=24h&detail=1&filter=device:mobile');
    if (listed.asOf === asOf) {
      const rows = await page.$$eval('table.streams tbody tr', (trs) => trs.map((tr) => [tr.querySelector('th a')?.textContent, tr.querySelector('td')?.textContent]));
      expect(rows).toEqual(listed.streams.map((s) => [s.streamId, formatInteger(s.totalSessions)]));
    }
    expect(await page.textContent('main')).toContain('The filters apply to every figure, the chart and the streams table');
    await page.close();
  });

  it('sorts the streams table by a column through its link, and Back restores the order', async () => {
    const page = await sessionPage(portal.token);
    const order = () => page.$$eval('table.streams tbody th a', (as) => as.map((a) => a.textContent));
    const first = await order();
    await page.click('thead a:has-text("Sessions")');
    await page.waitForURL(/sort=totalSessions/);
    expect(await page.getAttribute('th[aria-sort="descending"]', 'aria-sort')).toBe('descending');
    await page.goBack();
    expect(await order()).toEqual(first);
    await page.close();
  });
});

describe('a stream page', () => {
  it('shows a report posted to the collector without a reload', async () => {
    const page = await sessionPage(portal.token);
    await page.goto(`${portal.url}/portal/streams/acme%3Alive-main?window=live`);
    await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 42));
    const before = await api<{ totalSessions: number }>('/telemetry/metrics/acme:live-main?window=1h');
    expect(await postReport(portal, 'acme:live-main')).toEqual({ accepted: 1, rejected: [] });
    const shown = await eventually(async () => (await tileValues(page))['sessions'] === formatInteger(before.totalSessions + 1), 30_000, 250);
    expect(shown, portal.output().slice(-2000)).toBe(true);
    expect(await page.evaluate(() => (globalThis as unknown as { marker: number }).marker)).toBe(42);
    await page.close();
  });

  it('filters the page and its URL from a breakdown click; Back restores the view', async () => {
    const page = await sessionPage(portal.token);
    await page.goto(`${portal.url}/portal/streams/acme%3Alive-main?window=24h&by=device`);
    const all = await tileValues(page);
    await page.click('table.breakdown tbody th a[data-value="mobile"]');
    await page.waitForURL(/filter=device%3Amobile/);
    expect(await page.textContent('.chips')).toContain('device = mobile');
    const filtered = await tileValues(page);
    const asOf = await page.getAttribute('main', 'data-as-of');
    const m = await api<{ totalSessions: number; asOf: string }>('/telemetry/metrics/acme:live-main?window=24h&filter=device:mobile');
    // The charts follow the filters: each bucket is the filtered series' (same snapshot).
    const chart = JSON.parse((await page.textContent('#sessions-data'))!) as { x: number[]; sessions: number[]; rebufferRatio: (number | null)[] };
    const series = await api<{ buckets: { start: string; sessions: number }[]; filters: string[] }>(
      '/telemetry/timeseries?streamId=acme:live-main&window=24h&bucketSeconds=600&quality=true&filter=device:mobile',
    );
    expect(series.filters).toEqual(['device:mobile']);
    if (m.asOf === asOf) {
      expect(filtered['sessions']).toBe(formatInteger(m.totalSessions));
      const byStart = new Map(series.buckets.map((b) => [Date.parse(b.start) / 1000, b.sessions]));
      expect(chart.x.map((x) => byStart.get(x))).toEqual(chart.sessions);
    }
    expect(chart.rebufferRatio).toBeDefined();
    expect(filtered['sessions']).not.toBe(all['sessions']);
    await page.goBack();
    await page.waitForURL((u) => !u.search.includes('filter='));
    expect(await page.textContent('.chips')).toContain('No filter');
    await page.close();
  });

  it("charts the rebuffer ratio over its bands and the startup p95 from the API's series with quality figures", async () => {
    const page = await sessionPage(portal.token);
    await page.goto(`${portal.url}/portal/streams/acme%3Alive-main?window=24h`);
    const asOf = await page.getAttribute('main', 'data-as-of');
    const data = JSON.parse((await page.textContent('#rebuffer-ratio-data'))!) as { x: number[]; rebufferRatio: (number | null)[]; startupP95: (number | null)[] };
    const series = await api<{ buckets: { start: string; watchMs: number; stallMs: number; rebufferRatio: number; startupTimeP95Ms: number | null }[] }>(
      '/telemetry/timeseries?streamId=acme:live-main&window=7d&bucketSeconds=600&quality=true',
    );
    const m = await api<{ asOf: string }>('/telemetry/metrics/acme:live-main?window=24h');
    if (m.asOf === asOf) {
      const byStart = new Map(series.buckets.map((b) => [Date.parse(b.start) / 1000, b]));
      expect(data.x.length).toBeGreaterThan(100);
      data.x.forEach((x, i) => {
        const b = byStart.get(x)!;
        expect(data.rebufferRatio[i]).toBe(b.watchMs + b.stallMs > 0 ? b.rebufferRatio : null);
        expect(data.startupP95[i]).toBe(b.startupTimeP95Ms);
      });
      expect(data.startupP95.some((v) => v !== null)).toBe(true);
    }
    // Both charts are drawn (a canvas each) and named for screen readers.
    expect(await page.locator('[data-chart="rebuffer-ratio"] canvas').count()).toBe(1);
    expect(await page.locator('[data-chart="startup"] canvas').count()).toBe(1);
    expect(await page.getAttribute('[data-chart="rebuffer-ratio"]', 'aria-label')).toContain('poor above 3 %');
    await page.close();
  });

  it("shows the latest published report's verdict once a nightly run published one, and one made now before", async () => {
    const page = await sessionPage(portal.token);
    // `start` published the sample's reports: without them, each verdict is of a report made now.
    await fs.rm(path.join(portal.warehouse, 'reports'), { recursive: true, force: true });
    await page.goto(`${portal.url}/portal/reports`);
    expect(await page.textContent('table.reports tbody')).toContain('made now, as of');
    expect((await cli(['reports', '--customer', 'acme', '--warehouse', portal.warehouse])).code).toBe(0);
    await page.goto(`${portal.url}/portal/reports`);
    const text = (await page.textContent('table.reports tbody'))!;
    expect(text).toContain('published, as of');
    expect(text).not.toContain('made now');
    // The links open the published files, whose verdict is the one shown.
    const row = page.locator('table.reports tbody tr', { has: page.locator('th a', { hasText: 'acme:live-main' }) });
    const href = await row.locator('a[href$="report.json?source=published"]').getAttribute('href');
    const res = await page.request.get(`${portal.url}${href}`);
    expect(res.status()).toBe(200);
    const report = (await res.json()) as { conclusion: { assessment: string } };
    expect(await row.locator('.verdict').textContent()).toBe(report.conclusion.assessment);
    await page.goto(`${portal.url}/portal/streams/acme%3Alive-main`);
    expect(await page.textContent('#verdict')).toContain('the latest published report, as of');
    await page.close();
  });

  it("refuses another customer's stream with 403", async () => {
    const page = await sessionPage(portal.token);
    const res = await page.goto(`${portal.url}/portal/streams/globex%3Alive-main`);
    expect(res!.status()).toBe(403);
    expect(await page.textContent('h1')).toContain('Not yours');
    const report = await page.goto(`${portal.url}/portal/streams/globex%3Alive-main/report.json`);
    expect(report!.status()).toBe(403);
    // Its own report's signed statement passes through as the API serves it.
    const cookie = (await page.context().cookies()).find((c) => c.name === 'p2ptel_portal')!;
    const jws = await fetch(`${portal.url}/portal/streams/acme%3Alive-main/report.jws`, { headers: { Cookie: `p2ptel_portal=${cookie.value}` } });
    expect(jws.status).toBe(200);
    const direct = await fetch(`${portal.url}/control/reports/pilot/acme:live-main?format=jws`, { headers: { Authorization: `Bearer ${portal.token}` } });
    expect((await jws.text()).split('.')).toHaveLength(3);
    expect(direct.headers.get('etag')).toBe(jws.headers.get('etag'));
    await page.close();
  });

  it('shows an SDK value that is markup as text (no element, no script)', async () => {
    const xss = '<img src=x onerror=alert(1)>';
    expect(await postReport(portal, 'acme:live-main', { region: xss })).toEqual({ accepted: 1, rejected: [] });
    const page = await sessionPage(portal.token);
    let dialogs = 0;
    page.on('dialog', (d) => {
      dialogs++;
      void d.dismiss();
    });
    const url = `${portal.url}/portal/streams/acme%3Alive-main?window=live&by=region`;
    const listed = await eventually(async () => {
      await page.goto(url);
      return (await page.$$eval('table.breakdown tbody th a[data-value]', (as) => as.map((a) => a.textContent))).includes(xss);
    }, 30_000, 500);
    expect(listed).toBe(true);
    expect(await page.$$('table.breakdown img')).toHaveLength(0);
    // Added as a filter, it is shown as text in the chip too.
    await page.click(`table.breakdown tbody th a[data-value="${xss}"]`);
    await page.waitForURL(/filter=/);
    expect(await page.textContent('.chips')).toContain(xss);
    expect(await page.$$('.chips img')).toHaveLength(0);
    expect(dialogs).toBe(0);
    await page.close();
  });
});

describe('origins', () => {
  it('refuses a bad URL inline and stores nothing; saves a good one', async () => {
    const page = await sessionPage(portal.token);
    await page.goto(`${portal.url}/portal/origins`);
    const before = await api<{ origins: string[] }>('/control/tenants/acme/origins');
    await page.fill('#origin-new', 'ftp://user:pw@example.com/x?y');
    await page.click('.origin-add button');
    await page.waitForSelector('#origin-new-error');
    expect(await page.getAttribute('#origin-new', 'aria-invalid')).toBe('true');
    expect((await page.textContent('#origin-new-error'))!.length).toBeGreaterThan(5);
    expect(await api<{ origins: string[] }>('/control/tenants/acme/origins')).toMatchObject({ origins: before.origins });
    await page.fill('#origin-new', 'HTTPS://CDN.Example.com:443/live');
    await page.click('.origin-add button');
    await page.waitForSelector('.notice');
    expect((await api<{ origins: string[] }>('/control/tenants/acme/origins')).origins).toEqual([...before.origins, 'https://cdn.example.com/live']);
    await page.click('.origin-clear button');
    await page.waitForSelector('.notice');
    expect((await api<{ origins: string[] }>('/control/tenants/acme/origins')).origins).toEqual([]);
    await page.close();
  });
});

describe('sessions and security', () => {
  it('carries the security headers on every portal response, and keeps the JSON routes on bearer tokens', async () => {
    const page = await sessionPage(portal.token);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'p2ptel_portal')!;
    for (const path of ['/portal/login', '/portal/', '/portal/streams/acme%3Alive-main', '/portal/reports', '/portal/origins', '/portal/nope']) {
      const res = await fetch(`${portal.url}${path}`, { headers: { Cookie: `p2ptel_portal=${cookie.value}` }, redirect: 'manual' });
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).not.toMatch(/unsafe-inline|unsafe-eval/);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), path).toBeTruthy();
    }
    // The session cookie never authenticates the JSON API.
    const json = await fetch(`${portal.url}/telemetry/streams`, { headers: { Cookie: `p2ptel_portal=${cookie.value}` } });
    expect(json.status).toBe(401);
    await page.close();
  });

  it('refuses a state-changing post without a same-origin Origin or the CSRF value', async () => {
    const page = await sessionPage(portal.token);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'p2ptel_portal')!;
    const csrf = await page.getAttribute('form.signout input[name=csrf]', 'value');
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${portal.url}/portal/origins`, { method: 'POST', redirect: 'manual', headers: { Cookie: `p2ptel_portal=${cookie.value}`, 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body });
    const change = `action=add&origin=${encodeURIComponent('https://evil.example.com')}`;
    expect((await post({}, `${change}&csrf=${csrf}`)).status).toBe(403);
    expect((await post({ Origin: 'https://evil.example.com' }, `${change}&csrf=${csrf}`)).status).toBe(403);
    expect((await post({ Origin: portal.url }, `${change}&csrf=wrong`)).status).toBe(403);
    expect((await api<{ origins: string[] }>('/control/tenants/acme/origins')).origins).not.toContain('https://evil.example.com');
    const login = await fetch(`${portal.url}/portal/login`, { method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: portal.url }, body: `token=${portal.token}` });
    expect(login.status).toBe(403);
    expect(login.headers.get('set-cookie') ?? '').not.toContain('p2ptel_portal=');
    await page.close();
  });

  it('ends the session at sign-out', async () => {
    const page = await signedIn(portal.token);
    const cookie = (await page.context().cookies()).find((c) => c.name === 'p2ptel_portal')!;
    await page.click('form.signout button');
    await page.waitForURL(/\/portal\/login\?ended=signed_out/);
    const again = await fetch(`${portal.url}/portal/`, { headers: { Cookie: `p2ptel_portal=${cookie.value}` }, redirect: 'manual' });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('/portal/login');
    await page.close();
  });

  it("ends an open page's session within seconds of its token's revocation", async () => {
    const token = (await cli(['token', '--customer', 'acme', '--warehouse', portal.warehouse])).stdout.trim();
    const page = await signedIn(token);
    await page.goto(`${portal.url}/portal/?window=live`);
    expect((await cli(['token', 'revoke', token, '--warehouse', portal.warehouse])).code).toBe(0);
    await page.waitForURL(/\/portal\/login\?ended=revoked/, { timeout: 15_000 });
    expect(await page.textContent('.notice')).toContain('revoked');
    await page.close();
  });
});

describe('operators', () => {
  it('see the tenants, billing and the platform, and open a tenant; a tenant cannot', async () => {
    const page = await sessionPage(operatorToken);
    expect(await page.textContent('h1')).toContain('Platform');
    await page.click('nav a:has-text("Tenants")');
    await page.waitForURL(/\/portal\/tenants/);
    await page.click('table a:has-text("globex")');
    await page.waitForURL(/customer=globex/);
    expect(await page.textContent('h1')).toContain('Overview of globex');
    const rows = await page.$$eval('table.streams tbody th a', (as) => as.map((a) => a.textContent));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r!.startsWith('globex:'))).toBe(true);
    const billing = await page.goto(`${portal.url}/portal/billing`);
    expect(billing!.status()).toBe(200);
    const tenant = await signedIn(globexToken);
    expect((await tenant.goto(`${portal.url}/portal/tenants`))!.status()).toBe(403);
    expect((await tenant.goto(`${portal.url}/portal/billing`))!.status()).toBe(403);
    await tenant.close();
    await page.close();
  });
});

describe('accessibility', () => {
  it('has no serious or critical axe violation on any page, and works from the keyboard', async () => {
    const page = await sessionPage(portal.token);
    const op = await sessionPage(operatorToken);
    const pages: [Page, string][] = [
      [page, '/portal/'],
      [page, '/portal/streams/acme%3Alive-main'],
      [page, '/portal/reports'],
      [page, '/portal/origins'],
      [op, '/portal/tenants'],
      [op, '/portal/billing'],
      [op, '/portal/'],
    ];
    // Only the violations are asked for in full (axe's resultTypes: passes and the rest reported by
    // one node each), which is all the test reads: the same rules run on the same nodes.
    const axe = (p: Page) => new AxeBuilder({ page: p }).options({ resultTypes: ['violations'] });
    for (const [p, path] of pages) {
      await p.goto(`${portal.url}${path}`);
      const { violations } = await axe(p).analyze();
      const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), path).toEqual([]);
    }
    const login = await browser.isolatedPage();
    await login.goto(`${portal.url}/portal/login`);
    expect((await axe(login).analyze()).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
    await Promise.all([page.close(), op.close(), login.close()]);
    // Keyboard: from the top, Tab reaches the "7 days" window link, and Enter follows it.
    const kb = await sessionPage(portal.token);
    await kb.bringToFront();
    const focused = () => kb.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string | null } | null } }).document.activeElement?.textContent?.trim() ?? '');
    const seen: string[] = [];
    for (let i = 0; i < 30 && seen.at(-1) !== '7 days'; i++) {
      await kb.keyboard.press('Tab');
      seen.push(await focused());
    }
    expect(seen.at(-1), seen.join(' | ')).toBe('7 days');
    await kb.keyboard.press('Enter');
    await kb.waitForURL(/window=7d/);
    // The filter form from the keyboard: a value typed, Enter submits it.
    await kb.focus('#filter-value');
    await kb.selectOption('#filter-dim', 'device');
    await kb.fill('#filter-value', 'tv');
    await kb.keyboard.press('Enter');
    await kb.waitForURL(/filter=device%3Atv/);
    await kb.close();
  }, 180_000);
});
