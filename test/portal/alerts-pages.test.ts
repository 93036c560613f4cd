// The alerts and webhooks pages in a real browser (Chromium driven by playwright-core) against a
// real `start` process: a refused rule shown with the API's reason beside each field and nothing
// stored, a rule created, firing on a later snapshot and shown with its open incident, then
// deleted; an endpoint refused inline, then registered with its secret shown once, and a test
// ping that the receiver verifies with `standardwebhooks`; the forms' CSRF and Origin checks; axe.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from '../pilot/browser.ts';
import { postReport, startPortal, type StartedPortal } from '../helpers/portal.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { eventually } from '../helpers/child-api.ts';

// A loaded machine can take tens of seconds for a page: generous bounds, never a timing assertion.
vi.setConfig({ testTimeout: 180_000 });
const NAVIGATION = { waitUntil: 'commit', timeout: 90_000 } as const;

let portal: StartedPortal;
let browser: Browser;
let rx: Receiver;

beforeAll(async () => {
  // The receiver listens on loopback: the API must allow a private target.
  portal = await startPortal({ WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' });
  browser = await launchChromium();
  rx = await startReceiver();
}, 180_000);

afterEach((ctx) => {
  if (ctx.task.result?.state === 'fail') console.error(`start's output, last 4,000 characters:\n${portal.output().slice(-4000)}`);
});

afterAll(async () => {
  await rx?.close();
  await browser?.close();
  await portal?.stop();
});

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${portal.url}${path}`, { headers: { Authorization: `Bearer ${portal.token}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

/** A fresh browser page (its own cookie jar) signed in with the tenant's token, at `path`. */
async function signedIn(path: string): Promise<Page> {
  const page = await browser.isolatedPage();
  await page.goto(`${portal.url}/portal/login`);
  await page.fill('#token', portal.token);
  await page.click('button[type=submit]');
  await page.waitForURL(`${portal.url}/portal/`, NAVIGATION);
  await page.goto(`${portal.url}${path}`, NAVIGATION);
  await page.waitForLoadState('domcontentloaded', { timeout: 90_000 });
  return page;
}

async function submit(page: Page, form: string, waitFor: string): Promise<void> {
  await page.click(`${form} button[type=submit]`);
  await page.waitForSelector(waitFor, { timeout: 90_000 });
}

describe('alerts page', () => {
  it('shows the reasons of a refused rule beside its fields and stores nothing', async () => {
    const page = await signedIn('/portal/alerts');
    expect(await page.textContent('h1')).toContain('Alerts');
    expect(await page.getAttribute('nav a[href^="/portal/alerts"]', 'aria-current')).toBe('page');
    await page.fill('#rule-name', 'bad');
    await page.fill('#rule-threshold', 'many');
    await page.fill('#rule-for', '10d');
    await submit(page, '.rule-create', '#rule-error');
    for (const f of ['threshold', 'for']) {
      expect(await page.getAttribute(`#rule-${f}`, 'aria-invalid'), f).toBe('true');
      expect((await page.textContent(`#rule-${f}-error`))!.length, f).toBeGreaterThan(3);
    }
    // What was typed is kept for correction; then the filters are checked too.
    expect(await page.inputValue('#rule-for')).toBe('10d');
    await page.fill('#rule-threshold', '0.5');
    await page.fill('#rule-for', '30s');
    await page.fill('#rule-filters', 'nope:x');
    await submit(page, '.rule-create', '#rule-filters-error');
    expect(await page.getAttribute('#rule-filters', 'aria-invalid')).toBe('true');
    expect(await page.getAttribute('#rule-threshold', 'aria-invalid')).toBeNull();
    expect((await api<{ alerts: unknown[] }>('/control/alerts')).alerts).toEqual([]);
    await page.close();
  });

  it('creates a rule, shows it firing with its open incident on a later snapshot, and deletes it', async () => {
    const page = await signedIn('/portal/alerts');
    await page.fill('#rule-name', 'any session');
    await page.selectOption('#rule-metric', 'totalSessions');
    await page.selectOption('#rule-condition', 'above');
    await page.fill('#rule-threshold', '0');
    await page.fill('#rule-filters', 'cohort:p2p');
    await submit(page, '.rule-create', '.notice');
    const [rule] = (await api<{ alerts: { id: string; name: string; filters: string[] }[] }>('/control/alerts')).alerts;
    expect(rule).toMatchObject({ name: 'any session', filters: ['cohort:p2p'] });
    expect(await page.textContent(`tr[data-rule="${rule!.id}"] th`)).toContain('any session');
    // The rule's link in a webhook event leads to its row.
    await page.goto(`${portal.url}/portal/alerts/${rule!.id}`, NAVIGATION);
    await page.waitForURL(new RegExp(`/portal/alerts#rule-${rule!.id}$`), NAVIGATION);
    // A report makes a new snapshot; its evaluation opens the incident.
    await postReport(portal, 'acme:live-main');
    const opened = await eventually(async () => (await api<{ incidents: unknown[] }>('/control/incidents?state=open')).incidents.length > 0, 120_000, 500);
    expect(opened).toBe(true);
    // Read again with a GET (a reload would post the creation form again).
    await page.goto(`${portal.url}/portal/alerts`, NAVIGATION);
    await page.waitForSelector(`tr[data-rule="${rule!.id}"]`, { timeout: 90_000 });
    expect(await page.textContent(`tr[data-rule="${rule!.id}"] .state`)).toContain('firing');
    expect(await page.textContent('.incidents.open tbody')).toContain('any session');
    await page.click(`tr[data-rule="${rule!.id}"] .rule-delete button`);
    await page.waitForSelector('.notice', { timeout: 90_000 });
    expect(await page.$(`tr[data-rule="${rule!.id}"]`)).toBeNull();
    expect((await api<{ alerts: unknown[] }>('/control/alerts')).alerts).toEqual([]);
    await page.close();
  });
});

describe('webhooks page', () => {
  it('refuses a bad URL beside its field, registers a good one showing its secret once, and sends a verified test ping', async () => {
    const page = await signedIn('/portal/webhooks');
    await page.fill('#webhook-url', 'ftp://example.com/hook');
    await submit(page, '.webhook-create', '#webhook-url-error');
    expect(await page.getAttribute('#webhook-url', 'aria-invalid')).toBe('true');
    expect((await api<{ webhooks: unknown[] }>('/control/webhooks')).webhooks).toEqual([]);

    await page.fill('#webhook-url', `${rx.url}/hook`);
    await submit(page, '.webhook-create', '#webhook-secret');
    const secret = (await page.textContent('#webhook-secret'))!.trim();
    expect(secret).toMatch(/^whsec_/);
    const [endpoint] = (await api<{ webhooks: { id: string; url: string }[] }>('/control/webhooks')).webhooks;
    expect(endpoint!.url).toBe(`${rx.url}/hook`);
    // Shown once: the page read again has no secret.
    await page.goto(`${portal.url}/portal/webhooks`, NAVIGATION);
    await page.waitForSelector(`tr[data-webhook="${endpoint!.id}"]`, { timeout: 90_000 });
    expect(await page.content()).not.toContain('whsec_');

    await page.click(`tr[data-webhook="${endpoint!.id}"] .webhook-test button`);
    await page.waitForSelector('.notice', { timeout: 90_000 });
    expect(await eventually(async () => rx.received.some((r) => r.body.includes('"ping"')), 60_000, 200)).toBe(true);
    const ping = rx.received.find((r) => r.body.includes('"ping"'))!;
    expect(rx.verify(ping, secret)).toMatchObject({ type: 'ping' });
    await page.close();
  });

  it('refuses a form post without a same-origin Origin or the CSRF value', async () => {
    const page = await signedIn('/portal/webhooks');
    const cookie = (await page.context().cookies()).find((c) => c.name === 'p2ptel_portal')!;
    const csrf = await page.getAttribute('.webhook-create input[name=csrf]', 'value');
    const before = (await api<{ webhooks: unknown[] }>('/control/webhooks')).webhooks.length;
    const post = (path: string, headers: Record<string, string>, body: string) =>
      fetch(`${portal.url}${path}`, { method: 'POST', redirect: 'manual', headers: { Cookie: `p2ptel_portal=${cookie.value}`, 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body });
    const create = `action=create&url=${encodeURIComponent(`${rx.url}/evil`)}`;
    expect((await post('/portal/webhooks', {}, `${create}&csrf=${csrf}`)).status).toBe(403);
    expect((await post('/portal/webhooks', { Origin: 'https://evil.example.com' }, `${create}&csrf=${csrf}`)).status).toBe(403);
    expect((await post('/portal/alerts', { Origin: portal.url }, 'action=create&name=x&metric=totalSessions&window=1h&condition=above&threshold=1&csrf=wrong')).status).toBe(403);
    expect((await api<{ webhooks: unknown[] }>('/control/webhooks')).webhooks).toHaveLength(before);
    expect((await api<{ alerts: unknown[] }>('/control/alerts')).alerts).toEqual([]);
    await page.close();
  });
});

describe('accessibility', () => {
  it('has no serious or critical axe violation on either page, each in its own context', async () => {
    for (const path of ['/portal/alerts', '/portal/webhooks']) {
      const page = await signedIn(path);
      const { violations } = await new AxeBuilder({ page }).analyze();
      const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`), path).toEqual([]);
      await page.close();
    }
  });
});
