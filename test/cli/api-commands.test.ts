// The CLI around the API: tenants, tokens (printed alone on stdout, verifiable), `serve` with a
// clean SIGTERM, and `start` serving what it printed (the API's curls and the collector's).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { cli, cliAll } from '../helpers/cli.ts';
import { startLong } from '../helpers/long-command.ts';
import { eventually } from '../helpers/child-api.ts';
import { tempDir } from '../helpers/warehouse.ts';
import { PROJECT_ROOT } from '../../lib/version.ts';
import { tokenSecret, verifyToken } from '../../api/tokens.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('tenants and tokens', () => {
  it('adds a tenant (printing only its id), refuses a second one for the same customer, lists them', async () => {
    const add = await cli(['tenants', 'add', '--warehouse', dir, '--customer', 'acme', '--name', 'Acme Corp', '--cdn-price-per-gb', '0.035', '--savings-share-pct', '20']);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toMatch(/^t_[0-9A-Z]{26}\n$/);
    const again = await cli(['tenants', 'add', '--warehouse', dir, '--customer', 'acme', '--name', 'Other']);
    expect(again.code).toBe(2);
    expect(again.stderr).toBe('error: a tenant for customer acme exists already\n');
    const defaults = await cli(['tenants', 'add', '--warehouse', dir, '--customer', 'globex', '--name', 'Globex']);
    expect(defaults.code).toBe(0);
    const bad = await cli(['tenants', 'add', '--warehouse', dir, '--customer', 'Bad Id', '--name', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --customer: /);
    const list = await cli(['tenants', 'list', '--warehouse', dir]);
    expect(list.stdout).toMatch(/acme\s+Acme Corp\s+0\.035\s+20/);
    expect(list.stdout).toMatch(/globex\s+Globex\s+0\.02 \(assumed\)\s+25/);
    const mode = (await fs.stat(path.join(dir, 'control', 'tenants.json'))).mode & 0o777;
    expect(mode & 0o022).toBe(0);
  });

  it('prints a token and nothing else, which the API secret verifies', async () => {
    const tenant = await cli(['token', '--warehouse', dir, '--customer', 'acme', '--ttl', '2h']);
    expect(tenant.code, tenant.stderr).toBe(0);
    expect(tenant.stdout).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\n$/);
    const secret = await tokenSecret(warehouseLayout(dir), null);
    const caller = await verifyToken(secret, tenant.stdout.trim());
    expect(caller).toMatchObject({ role: 'tenant', customerId: 'acme' });
    expect(caller.expiresAt - Date.now() / 1000).toBeGreaterThan(7190);
    expect(caller.expiresAt - Date.now() / 1000).toBeLessThan(7210);
    const operator = await cli(['token', '--warehouse', dir, '--role', 'operator']);
    expect(await verifyToken(secret, operator.stdout.trim())).toMatchObject({ role: 'operator' });
    const mode = (await fs.stat(path.join(dir, 'control', 'token-secret'))).mode & 0o777;
    expect(mode).toBe(0o600);
  });

  it('says clearly what is wrong with a token request', async () => {
    const cases: [string[], RegExp][] = [
      [['token', '--warehouse', dir, '--customer', 'nobody'], /no tenant for nobody/],
      [['token', '--warehouse', dir], /--customer is required/],
      [['token', '--warehouse', dir, '--customer', 'acme', '--ttl', 'forever'], /--ttl: a lifetime is a number and a unit/],
      [['token', '--warehouse', dir, '--role', 'admin'], /--role: tenant or operator/],
      [['token', '--warehouse', dir, '--role', 'operator', '--customer', 'acme'], /not tied to a customer/],
    ];
    // Independent refusals (nothing is written): a few processes at a time, each checked alone.
    const results = await cliAll(cases.map(([args]): [string[]] => [args]));
    for (const [i, [args, msg]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(msg);
    }
  });
});

describe('serve and start', () => {
  it('serve answers on loopback and exits 0 on SIGTERM', async () => {
    const { child, output } = await startLong(['serve', '--warehouse', dir, '--port', '0'], /API listening on http:\/\/127\.0\.0\.1:\d+/);
    const url = /API listening on (\S+)/.exec(output())![1]!;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(503); // nothing published in this warehouse
    const exited = new Promise<number | null>((r) => child.on('exit', r));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('start generates, rolls up, pre-renders the pilot reports, prints a token and curl commands that work, counts a posted report within seconds, and stops on Ctrl-C', async () => {
    const wh = await tempDir();
    try {
      // The tenant list and the keys polled every 10 minutes: the token and the key printed must
      // work the moment they are printed (start makes the tenant a moment before), not a poll later.
      const { child, output } = await startLong(['start', '--warehouse', wh, '--port', '0', '--collector-port', '0'], /session-reports"\n/, { REVOCATION_POLL_SECONDS: '600' });
      const text = output();
      expect(text).toMatch(/generated [\d,]+ reports/);
      expect(text).toMatch(/snapshot \S+ published/);
      expect(text).toMatch(/9 reports of 3 customers for snapshot \S+ \(3 rendered, 0 unchanged\)/);
      const site = /reports as a static site: (\S+index\.html)/.exec(text)![1]!;
      expect((await fs.readFile(site, 'utf8')).startsWith('<!DOCTYPE html>')).toBe(true);
      const curls = text.split('\n').filter((l) => l.trim().startsWith('curl -s -H'));
      expect(curls).toHaveLength(4);
      for (const line of curls) {
        const m = /-H "Authorization: Bearer (\S+)" "(\S+)"/.exec(line)!;
        const res = await fetch(m[2]!, { headers: { Authorization: `Bearer ${m[1]}` } });
        expect(res.status, line).toBe(200);
        // The pilot report was rendered by start's report run: served from its file.
        if (m[2]!.includes('/control/reports/pilot/')) expect(res.headers.get('x-report-source')).toBe('prerendered');
      }
      // The collector's curl posts a gzip'd report with the printed ingest key: accepted, and
      // counted by the API within seconds, with no other command (start rolls up as reports land).
      const metricsCurl = curls.find((l) => l.includes('/telemetry/metrics/'))!;
      const [, token, metricsUrl] = /-H "Authorization: Bearer (\S+)" "(\S+)"/.exec(metricsCurl)!;
      const sessions = async () => ((await (await fetch(metricsUrl!, { headers: { Authorization: `Bearer ${token}` } })).json()) as { totalSessions: number }).totalSessions;
      const before = await sessions();
      const post = text.split('\n').find((l) => l.includes('| gzip | curl'))!;
      const posted = await new Promise<string>((resolve, reject) =>
        execFile('bash', ['-c', post.trim()], (err, stdout) => (err ? reject(err) : resolve(stdout))),
      );
      expect(JSON.parse(posted)).toEqual({ accepted: 1, rejected: [] });
      const counted = await eventually(async () => (await sessions()) === before + 1, 30_000);
      expect(counted, `the posted report was not counted within 30 s:\n${output()}`).toBe(true);
      // start prints the run once it has published: the API may count the report a moment before.
      const said = /live: snapshot as of \S+ counts [\d,]+ reports \(\+1\)/;
      expect(await eventually(async () => said.test(output()), 10_000), output()).toBe(true);
      const exited = new Promise<number | string>((r) => child.on('exit', (code, signal) => r(code ?? `killed by ${signal}`)));
      child.kill('SIGINT');
      expect(await exited, output()).toBe(0);
    } finally {
      await fs.rm(wh, { recursive: true, force: true });
    }
  });

  it('start stopped by Ctrl-C while it opens its ports or during its first run finishes the step in flight, serves nothing more, and exits 0', async () => {
    // Two steps as start's output shows them; SIGINT within 50 ms of the line, while the next step
    // runs (once live: the test above; the mechanism of a stop that died: test/cli/stop-signals.test.ts).
    const steps = [
      { step: 'opening the ports', line: /^warehouse: /m },
      { step: 'the first run', line: /generated [\d,]+ reports/ },
    ];
    const results = await Promise.all(
      steps.map(async ({ step, line }) => {
        const wh = await tempDir();
        try {
          const { child, output } = await startLong(['start', '--warehouse', wh, '--port', '0', '--collector-port', '0'], line);
          const exited = new Promise<number | string>((r) => child.on('exit', (code, signal) => r(code ?? `killed by ${signal}`)));
          child.kill('SIGINT');
          return { step, exit: await exited, output: output() };
        } finally {
          await fs.rm(wh, { recursive: true, force: true });
        }
      }),
    );
    for (const { step, exit, output } of results) {
      expect(exit, `${step}:\n${output}`).toBe(0);
      expect(output, step).toMatch(/^SIGINT: stopping \(the step in flight finishes/m);
      expect(output, step).toMatch(/\nstopped before serving live\n$/);
      expect(output, step).not.toMatch(/API listening on/);
    }
    // The first run in flight finished and published; nothing after it ran.
    expect(results[1]!.output).toMatch(/snapshot \S+ published/);
    expect(results[1]!.output).not.toMatch(/pilot reports|reports of 3 customers/);
  });
});
