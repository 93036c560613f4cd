// The platform configuration is read through one stat-checked reader by the API and the report
// job: an edit applies to the next request without a restart (billing's default rate, the pilot
// report's criteria), a report run after the edit pre-renders what the API then serves (the
// inputs fingerprints agree), and an invalid edit keeps the last good document in use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { startTestApi, AS_OF, type TestApi } from '../helpers/api.ts';
import { DEFAULT_PLATFORM_CONFIG_FILE, type PlatformConfig } from '../../config/platform.ts';
import { runReports } from '../../jobs/pilot-reports/run.ts';

let t: TestApi;
let file: string;
let original: PlatformConfig;

/** Replace the document the way an operator's editor or a deploy does: write, then rename. */
async function edit(change: (c: PlatformConfig) => void): Promise<void> {
  const next = structuredClone(original);
  change(next);
  await fs.writeFile(`${file}.tmp`, JSON.stringify(next, null, 2));
  await fs.rename(`${file}.tmp`, file);
}

beforeAll(async () => {
  const dir = await fs.mkdtemp(path.join((await import('node:os')).tmpdir(), 'p2ptel-platform-'));
  file = path.join(dir, 'platform.json');
  await fs.copyFile(DEFAULT_PLATFORM_CONFIG_FILE, file);
  original = JSON.parse(await fs.readFile(file, 'utf8')) as PlatformConfig;
  t = await startTestApi({ env: { PLATFORM_CONFIG: file } });
}, 240_000);

afterAll(async () => {
  await t?.close();
  await fs.rm(path.dirname(file), { recursive: true, force: true });
});

type Json = Record<string, unknown>;

describe('platform configuration edits', () => {
  it('apply to billing and pilot reports at the next request, without a restart', async () => {
    const before = (await t.get('/billing/customers/globex', t.tokens.operator)).json as { rates: Json };
    expect(before.rates).toMatchObject({ cdnPricePerGb: 0.02, assumedRate: true });
    const report = async () => {
      const r = await t.get('/control/reports/pilot/acme:live-main?format=json', t.tokens.acme);
      expect(r.status).toBe(200);
      const criteria = ((r.json as Json)['conclusion'] as { criteria: { id: string; threshold: unknown }[] }).criteria;
      return { etag: r.headers.get('etag'), criteria, source: r.headers.get('x-report-source') };
    };
    const r1 = await report();

    await edit((c) => {
      c.billing.defaultCdnPricePerGb = 0.05;
      c.pilot.criteria.minSessions = 7;
    });
    const after = (await t.get('/billing/customers/globex', t.tokens.operator)).json as { rates: Json };
    expect(after.rates).toMatchObject({ cdnPricePerGb: 0.05, assumedRate: true });
    const r2 = await report();
    expect(r2.etag).not.toBe(r1.etag);
    expect(JSON.stringify(r2.criteria)).toContain('7');
    expect(r2.criteria).not.toEqual(r1.criteria);
  });

  it('the report run reads the edited document too: the API serves its pre-rendered files', async () => {
    const run = await runReports({ ...t.wh, config: { ...t.wh.config, platformConfigFile: file } }, { asOf: AS_OF });
    expect(run.rendered).toBeGreaterThan(0);
    const r = await t.get('/control/reports/pilot/acme:vod-library?format=md', t.tokens.acme);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-report-source')).toBe('prerendered');
  });

  it('keeps the last good document when an edit does not validate', async () => {
    await fs.writeFile(`${file}.tmp`, '{"billing": {"currency": "EUR"}}');
    await fs.rename(`${file}.tmp`, file);
    const r = await t.get('/billing/customers/globex', t.tokens.operator);
    expect(r.status).toBe(200);
    expect((r.json as { rates: Json }).rates).toMatchObject({ cdnPricePerGb: 0.05 });
  });
});
