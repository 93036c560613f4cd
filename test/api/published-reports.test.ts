// GET /control/reports/pilot/:streamId?source=published: the latest report a nightly run published
// for the stream, whatever the served snapshot: 404 report_not_published before any run, the run's
// files byte for byte after one, and still those once a newer snapshot without reports is served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { startTestApi, AS_OF, type TestApi } from '../helpers/api.ts';
import { runReports } from '../../jobs/pilot-reports/run.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { customerReportsDir } from '../../pilot/publish.ts';

let t: TestApi;
const STREAM = 'acme:live-main';

beforeAll(async () => {
  t = await startTestApi();
}, 240_000);
afterAll(async () => {
  await t?.close();
});

async function fetchReport(query: string, token = t.tokens.acme) {
  const res = await fetch(`${t.url}/control/reports/pilot/${encodeURIComponent(STREAM)}?${query}`, { headers: { Authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

/** Waits until the server serves the snapshot `id` (it watches CURRENT). */
async function served(id: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const r = (await (await fetch(`${t.url}/readyz`)).json()) as { snapshot?: string };
    if (r.snapshot === id) return;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`snapshot ${id} not served`);
}

describe('source=published', () => {
  it('is 404 report_not_published before any nightly run', async () => {
    const r = await fetchReport('format=json&source=published');
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body)).toMatchObject({ code: 'report_not_published' });
  });

  it("serves the nightly run's files as written, and keeps serving them once a newer snapshot has none", async () => {
    const run = await runReports(t.wh, { asOf: AS_OF });
    const first = (await readCurrent(t.wh.layout))!.snapshot;
    expect(run).toMatchObject({ snapshot: first });
    const dir = customerReportsDir(t.wh.layout, first, 'acme');
    const published = JSON.parse(await fs.readFile(path.join(dir, 'reports.json'), 'utf8')) as { asOf: string };
    for (const format of ['json', 'md', 'html', 'jws']) {
      const r = await fetchReport(`format=${format}&source=published`);
      expect(r.status, r.body).toBe(200);
      expect(r.headers.get('x-report-source')).toBe('published');
      expect(r.headers.get('x-report-snapshot')).toBe(first);
      expect(r.headers.get('x-report-as-of')).toBe(published.asOf);
      expect(r.body, format).toBe(await fs.readFile(path.join(dir, 'streams', `live-main.${format}`), 'utf8'));
    }
    const json = await fetchReport('format=json&source=published');
    const again = await fetch(`${t.url}/control/reports/pilot/${encodeURIComponent(STREAM)}?format=json&source=published`, {
      headers: { Authorization: `Bearer ${t.tokens.acme}`, 'If-None-Match': json.headers.get('etag')! },
    });
    expect(again.status).toBe(304);

    // A newer snapshot, without a nightly run: the published report stays the latest one.
    await runPipeline(t.wh, { asOf: new Date(AS_OF.getTime() + 60_000) });
    const second = (await readCurrent(t.wh.layout))!.snapshot;
    expect(second).not.toBe(first);
    await served(second);
    const still = await fetchReport('format=json&source=published');
    expect(still.headers.get('x-report-snapshot')).toBe(first);
    expect(still.body).toBe(json.body);
    const now = await fetchReport('format=json');
    expect(now.headers.get('x-report-source')).toBe('rendered');
    expect((JSON.parse(now.body) as { snapshot: { id: string } }).snapshot.id).toBe(second);
  });

  it("keeps each customer's latest published folder when its snapshot is pruned, and drops older ones", async () => {
    const published = (await fs.readdir(t.wh.layout.reports)).sort();
    const latest = published.at(-1)!;
    // An older published folder of acme, of a snapshot long gone.
    const older = path.join(t.wh.layout.reports, '20000101T000000000Z-0badcafe', 'acme');
    await fs.cp(path.join(t.wh.layout.reports, latest, 'acme'), older, { recursive: true });
    // Enough newer snapshots without reports to prune the published one's (SNAPSHOT_KEEP, 5 by default).
    for (let i = 2; i <= 7; i++) await runPipeline(t.wh, { asOf: new Date(AS_OF.getTime() + i * 60_000) });
    expect(await fs.readdir(t.wh.layout.snapshots)).not.toContain(latest);
    expect(await fs.readdir(t.wh.layout.reports)).toEqual([latest]);
    expect((await fs.readdir(path.join(t.wh.layout.reports, latest))).sort()).toEqual(['acme', 'globex']);
    await served((await readCurrent(t.wh.layout))!.snapshot);
    const r = await fetchReport('format=json&source=published');
    expect(r.status).toBe(200);
    expect(r.headers.get('x-report-snapshot')).toBe(latest);
  });

  it("answers 403 for another tenant's stream, and refuses a bucketSeconds other than the default", async () => {
    expect((await fetchReport('format=json&source=published', t.tokens.globex)).status).toBe(403);
    const r = await fetchReport('format=json&source=published&bucketSeconds=900');
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toMatchObject({ code: 'invalid_bucket_seconds' });
  });
});
