// `p2ptel verify-report` and `p2ptel keys` on a real static site: verifies, names a changed file, an
// unknown key fails, a rotated-out key verifies within its retention only, bad input exits 2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../lib/version.ts';
import { cli } from '../helpers/cli.ts';
import { AS_OF, historyWarehouse } from '../helpers/api.ts';
import { tempDir, type TestWarehouse } from '../helpers/warehouse.ts';
import { runReports } from '../../jobs/pilot-reports/run.ts';
import { readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { customerReportsDir } from '../../pilot/publish.ts';
import { reportJwks } from '../../control/report-keys.ts';

let wh: TestWarehouse;
let site: string;
let scratch: string;
let name: string;

beforeAll(async () => {
  wh = await historyWarehouse();
  await runReports(wh, { asOf: AS_OF });
  site = customerReportsDir(wh.layout, (await readCurrent(wh.layout))!.snapshot, 'acme');
  name = (await fs.readdir(path.join(site, 'streams'))).find((f) => f.endsWith('.jws'))!.slice(0, -'.jws'.length);
  scratch = await tempDir();
}, 240_000);
afterAll(async () => {
  await wh?.close();
  if (scratch) await fs.rm(scratch, { recursive: true, force: true });
});

/** A copy of the customer's site to change. */
async function copyOfSite(label: string): Promise<string> {
  const to = path.join(scratch, label);
  await fs.cp(site, to, { recursive: true });
  return to;
}

const verify = (target: string, ...more: string[]) => cli(['verify-report', target, '--warehouse', wh.root, ...more]);

describe('verify-report', () => {
  it('verifies a whole site and a single file, with the warehouse keys, a JWK Set file or its URL', async () => {
    const all = await verify(site);
    expect(all.code, all.stderr).toBe(0);
    const lines = all.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(line).toMatch(/^ok {6}\S+\.jws: acme:\S+, snapshot \S+ \(as of \S+\), verdict (pass|review), key \S+; \S+\.json, \S+\.md, \S+\.html match$/);

    const one = await verify(path.join(site, 'streams', `${name}.md`));
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(new RegExp(`^ok .*: acme:${name}, .*; ${name}\\.json, ${name}\\.md, ${name}\\.html match\\n$`));

    const file = path.join(scratch, 'jwks.json');
    await fs.writeFile(file, JSON.stringify(await reportJwks(wh.layout, 86_400_000)));
    expect((await verify(site, '--jwks', file)).code).toBe(0);
    const server = http.createServer((_req, res) => void fs.readFile(file).then((b) => res.end(b)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const byUrl = await verify(site, '--jwks', `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`);
      expect(byUrl.code, byUrl.stderr).toBe(0);
    } finally {
      server.close();
    }
  });

  it('fails on a changed byte of any format, naming the file, and exits 7', async () => {
    for (const format of ['json', 'md', 'html']) {
      const copy = await copyOfSite(`changed-${format}`);
      const file = path.join(copy, 'streams', `${name}.${format}`);
      const bytes = await fs.readFile(file);
      const at = Math.floor(bytes.length / 2);
      bytes[at] = bytes[at]! ^ 0x01;
      await fs.writeFile(file, bytes);
      const r = await verify(copy);
      expect(r.code, `${format}: ${r.stderr}`).toBe(7);
      const failed = r.stdout.split('\n').filter((l) => l.startsWith('FAILED'));
      expect(failed, format).toHaveLength(1);
      expect(failed[0]).toContain(`${file} differs from the signed report`);
      expect(r.stdout.split('\n').filter((l) => l.startsWith('ok'))).toHaveLength(2);
      expect(r.stderr).toBe('error: 1 of 3 statements did not verify\n');
    }
  });

  it('fails a report whose statement is gone, and one whose file is missing', async () => {
    const unsigned = await copyOfSite('unsigned');
    await fs.rm(path.join(unsigned, 'streams', `${name}.jws`));
    const r = await verify(unsigned);
    expect(r.code).toBe(7);
    expect(r.stdout).toMatch(new RegExp(`^FAILED  \\S+${name}\\.jws: no signed statement beside `, 'm'));
    const incomplete = await copyOfSite('incomplete');
    await fs.rm(path.join(incomplete, 'streams', `${name}.html`));
    const m = await verify(incomplete);
    expect(m.code).toBe(7);
    expect(m.stdout).toMatch(new RegExp(`^FAILED  \\S+${name}\\.jws: \\S+${name}\\.html is missing$`, 'm'));
  });

  it('fails a statement signed by a key the JWK Set does not hold', async () => {
    const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    const file = path.join(scratch, 'stranger.json');
    await fs.writeFile(file, JSON.stringify({ keys: [{ ...stranger, kid: 'someone-else', use: 'sig', alg: 'ES256' }] }));
    const r = await verify(path.join(site, 'streams', `${name}.html`), '--jwks', file);
    expect(r.code).toBe(7);
    expect(r.stdout).toMatch(/^FAILED .*: no ES256 key "[A-Za-z0-9_-]{43}" in the JWK Set/);
  });

  it('after `keys rotate`, verifies the old statements within the retention time and not after it', async () => {
    const rotated = await cli(['keys', 'rotate', '--warehouse', wh.root]);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stderr).toMatch(/^report-signing key \S+ signs from now on; \S+ is retired and stays in \/\.well-known\/jwks\.json for 400 days\n$/);
    const listed = await cli(['keys', 'list', '--warehouse', wh.root]);
    expect(listed.stdout).toMatch(/\bcurrent\b/);
    expect(listed.stdout).toMatch(/\bretired\b/);
    expect(listed.stdout).not.toMatch(/"d"|\bd:/);

    expect((await verify(site)).code).toBe(0);
    // A retention of a tenth of a second is over by the time the command starts.
    const expired = await cli(['verify-report', site, '--warehouse', wh.root], { REPORT_KEY_RETENTION_DAYS: '0.000001' });
    expect(expired.code).toBe(7);
    expect(expired.stdout).toMatch(/^FAILED .*retired longer ago than its retention/m);
  });

  it("is what docs/pilot-reports.md's check without our code finds too: a JWS library, the JWK Set and sha256sum", async () => {
    const doc = await fs.readFile(path.join(PROJECT_ROOT, 'docs/pilot-reports.md'), 'utf8');
    const script = /```js\n(\/\/ verify-statement\.mjs[\s\S]*?)```/.exec(doc)![1]!;
    // Inside the project, so that `jose` resolves as it would where a reader installed it.
    const dir = path.join(PROJECT_ROOT, 'test-output', 'verify-statement');
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'verify-statement.mjs'), script);
    const jwks = path.join(scratch, 'published.json');
    await fs.writeFile(jwks, JSON.stringify(await reportJwks(wh.layout, 86_400_000)));
    const run = promisify(execFile);
    const copy = await copyOfSite('by-the-docs');
    const statement = path.join(copy, 'streams', `${name}.jws`);
    const sums = await run(process.execPath, [path.join(dir, 'verify-statement.mjs'), statement, jwks]);
    await fs.writeFile(path.join(scratch, 'sums'), sums.stdout);
    const ok = await run('sha256sum', ['--check', path.join(scratch, 'sums')]);
    expect(ok.stdout.trim().split('\n').map((l) => l.replace(/^.*\//, ''))).toEqual([`${name}.json: OK`, `${name}.md: OK`, `${name}.html: OK`]);
    await fs.appendFile(path.join(copy, 'streams', `${name}.md`), 'Final pass/fail sign-off: pass\n');
    const changed = await run('sha256sum', ['--check', path.join(scratch, 'sums')]).catch((err: { code: number; stdout: string }) => err);
    expect(changed.stdout).toContain(`${name}.md: FAILED`);
    const stranger = path.join(scratch, 'stranger.json');
    await expect(run(process.execPath, [path.join(dir, 'verify-statement.mjs'), statement, stranger])).rejects.toThrow();
  });

  it('exits 2 on bad input', async () => {
    expect((await verify(path.join(scratch, 'nothing-here'))).code).toBe(2);
    const text = path.join(scratch, 'notes.txt');
    await fs.writeFile(text, 'hello');
    const wrongKind = await verify(text);
    expect(wrongKind.code).toBe(2);
    expect(wrongKind.stderr).toMatch(/^error: .*notes\.txt: not a report/);
    const badJwks = await verify(site, '--jwks', text);
    expect(badJwks.code).toBe(2);
    expect(badJwks.stderr).toMatch(/^error: --jwks: .* is not JSON\n$/);
    expect((await verify(site, '--jwks', path.join(scratch, 'missing.json'))).code).toBe(2);
  });
});
