// Snapshot swaps under load: while new snapshots are published, concurrent requests each get the
// figures of exactly one snapshot (never a mix), headers and body agree, and the server moves to
// the new snapshot. A newer snapshot that cannot be read is skipped, the last good one served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { startTestApi, AS_OF, type TestApi } from '../helpers/api.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { currentSnapshot, readStreamSummaries } from '../../warehouse/snapshots/snapshot-read.ts';
import { readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { writeJsonDurable } from '../../lib/fsx.ts';
import { expectedSeries } from '../helpers/series.ts';
import { expectSameRows, Independent, type Row } from '../helpers/independent.ts';
import type { WindowName } from '../../warehouse/figures/windows.ts';
import { capturedLog } from '../helpers/captured-log.ts';

const { log: captured, lines: logs } = capturedLog();

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi({ log: captured, env: { SNAPSHOT_POLL_SECONDS: '0.2' } });
}, 240_000);

afterAll(async () => {
  await t?.close();
});

async function waitForSnapshot(id: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const r = await t.get('/readyz');
    if ((r.json as { snapshot?: string }).snapshot === id) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`the server never moved to ${id}`);
}

/** Each snapshot's figures of one stream in the `all` window, by asOf. */
async function figuresByAsOf(): Promise<Map<string, string>> {
  const snap = (await currentSnapshot(t.wh.layout))!;
  const all = await readStreamSummaries(t.wh.db, snap, 'all');
  const s = all.find((x) => x.streamId === 'acme:live-main')!;
  return new Map([[snap.manifest.asOf, JSON.stringify([s.totalSessions, s.totalBytesOffloaded, s.totalBytesFallback])]]);
}

describe('snapshot swap', () => {
  it('never serves a mix while snapshots are published under concurrent requests', async () => {
    const expected = await figuresByAsOf();
    let stop = false;
    const seen: { asOf: string; lastModified: string | null; figures: string; etag: string | null }[] = [];
    const client = async () => {
      while (!stop) {
        const r = await t.get('/telemetry/metrics/acme:live-main?window=all', t.tokens.acme);
        expect(r.status).toBe(200);
        const b = r.json as Record<string, number | string>;
        seen.push({
          asOf: String(b['asOf']),
          lastModified: r.headers.get('last-modified'),
          figures: JSON.stringify([b['totalSessions'], b['totalBytesOffloaded'], b['totalBytesFallback']]),
          etag: r.headers.get('etag'),
        });
      }
    };
    const clients = Array.from({ length: 8 }, client);
    // Two publications: each takes in the reports of the five minutes after the previous asOf.
    for (const minutes of [2, 5]) {
      const run = await runPipeline(t.wh, { asOf: new Date(AS_OF.getTime() + minutes * 60_000) });
      for (const [k, v] of await figuresByAsOf()) expected.set(k, v);
      await waitForSnapshot(run.manifest.snapshot);
      await new Promise((res) => setTimeout(res, 200));
    }
    stop = true;
    await Promise.all(clients);

    expect(new Set(seen.map((s) => s.asOf)).size).toBe(3);
    expect(new Set(expected.values()).size).toBe(3); // the figures really changed
    const etagsByAsOf = new Map<string, Set<string>>();
    for (const s of seen) {
      expect(s.figures, `response of ${s.asOf}`).toBe(expected.get(s.asOf));
      expect(s.lastModified).toBe(new Date(s.asOf).toUTCString());
      if (!etagsByAsOf.has(s.asOf)) etagsByAsOf.set(s.asOf, new Set());
      etagsByAsOf.get(s.asOf)!.add(s.etag!);
    }
    // One ETag per snapshot, and different snapshots have different ones.
    for (const tags of etagsByAsOf.values()) expect(tags.size).toBe(1);
    expect(new Set([...etagsByAsOf.values()].map((x) => [...x][0])).size).toBe(3);
  });

  it('keeps serving the last good snapshot when a newer one is unreadable, and logs why', async () => {
    const good = (await readCurrent(t.wh.layout))!;
    const broken = `${good.snapshot.slice(0, 8)}T235959000Z-deadbeef`;
    const dir = path.join(t.wh.layout.snapshots, broken);
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, 'manifest.json'), '{"formatVersion": 1, "truncated');
    await writeJsonDurable(t.wh.layout.currentPointer, { snapshot: broken, asOf: '2026-11-21T00:00:00.000Z', publishedAt: new Date().toISOString() });

    for (let i = 0; i < 50 && !logs.some((l) => l['snapshot'] === broken); i++) await new Promise((r) => setTimeout(r, 50));
    const entry = logs.find((l) => l['snapshot'] === broken);
    expect(entry).toMatchObject({ level: 50, serving: good.snapshot, msg: 'cannot load the published snapshot; keeping the last good one' });
    const ready = await t.get('/readyz');
    expect(ready.json).toMatchObject({ snapshot: good.snapshot });
    expect((await t.get('/telemetry/streams', t.tokens.acme)).status).toBe(200);

    // A good publication afterwards is picked up.
    await fs.rm(dir, { recursive: true });
    await writeJsonDurable(t.wh.layout.currentPointer, good);
    const next = await runPipeline(t.wh, { asOf: new Date(AS_OF.getTime() + 6 * 60_000) });
    await waitForSnapshot(next.manifest.snapshot);
  });

  it('serves the new snapshot\'s series, read from its files, equal to independent SQL, within 2 s of publication', async () => {
    // Two streams' series, cached in the old snapshot's responses, then a publication.
    const cases: [string, WindowName, number][] = [
      ['acme:live-main', '1h', 60],
      ['acme:live-main', '24h', 600],
      ['acme:vod-library', 'all', 86400],
      ['acme:live-main', '7d', 3600],
      ['acme:live-main', '24h', 900], // on demand
    ];
    for (const [streamId, window, size] of cases) {
      expect((await t.get(`/telemetry/timeseries?streamId=${streamId}&window=${window}&bucketSeconds=${size}`, t.tokens.acme)).status).toBe(200);
    }
    const before = (await t.get('/readyz')).json as { asOf: string };
    const asOf = new Date(Date.parse(before.asOf) + 3 * 60_000);
    const run = await runPipeline(t.wh, { asOf });
    const published = Date.now();
    await waitForSnapshot(run.manifest.snapshot);
    const servedAfterMs = Date.now() - published;
    expect(servedAfterMs).toBeLessThan(2_000);

    const ind = await Independent.create(t.wh.db, t.wh.layout.rawReports, asOf);
    for (const [streamId, window, size] of cases) {
      const r = await t.get(`/telemetry/timeseries?streamId=${streamId}&window=${window}&bucketSeconds=${size}`, t.tokens.acme);
      expect(r.status, r.text).toBe(200);
      const got = r.json as Record<string, unknown>;
      const want = await expectedSeries(ind, streamId, window, size);
      expect({ ...got, buckets: undefined }).toEqual({ ...want, buckets: undefined });
      expectSameRows(got['buckets'] as Row[], want['buckets'] as Row[], `${streamId} ${window} ${size} after the swap`);
      expect(r.headers.get('last-modified')).toBe(asOf.toUTCString());
    }
  });
});
