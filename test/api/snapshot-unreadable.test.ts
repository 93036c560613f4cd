// A published snapshot that cannot be read is not "nothing published yet": the API answers 503
// snapshot_unreadable and logs the file, and serves once the snapshot is readable again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import { pino } from 'pino';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { apiConfig } from '../helpers/api.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { startApi } from '../../api/server.ts';

const START = new Date('2026-11-20T00:00:00Z');
let wh: TestWarehouse;

beforeAll(async () => {
  wh = await openTestWarehouse();
  await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 1, sessions: 10, start: START, hours: 1, seed: 9 });
});
afterAll(async () => {
  await wh?.close();
});

async function withApi(fn: (url: string, logs: () => Record<string, unknown>[]) => Promise<void>): Promise<void> {
  const chunks: string[] = [];
  const log = pino({ level: 'warn' }, { write: (s: string) => void chunks.push(s) });
  const api = await startApi(apiConfig(wh.root, { SNAPSHOT_POLL_SECONDS: '0.2' }), log);
  try {
    await fn(api.url, () => chunks.map((c) => JSON.parse(c) as Record<string, unknown>));
  } finally {
    await api.close();
  }
}

describe('snapshot_unreadable', () => {
  it('answers snapshot_unavailable when nothing is published, snapshot_unreadable when CURRENT is damaged', async () => {
    await withApi(async (url) => {
      expect(await (await fetch(`${url}/readyz`)).json()).toMatchObject({ code: 'snapshot_unavailable' });
    });
    await fs.mkdir(wh.layout.snapshots, { recursive: true });
    await fs.writeFile(wh.layout.currentPointer, 'garbage');
    await withApi(async (url, logs) => {
      const r = await fetch(`${url}/readyz`);
      expect(r.status).toBe(503);
      expect(r.headers.get('content-type')).toBe('application/problem+json');
      expect(await r.json()).toMatchObject({ code: 'snapshot_unreadable', status: 503 });
      expect(logs().some((l) => l['file'] === wh.layout.currentPointer && l['msg'] === 'CURRENT is unreadable; keeping the loaded snapshot')).toBe(true);
    });
  });

  it('answers snapshot_unreadable when CURRENT names a snapshot whose manifest is gone, and recovers', async () => {
    await fs.rm(wh.layout.currentPointer);
    const run = await runPipeline(wh, { asOf: new Date('2026-11-20T01:00:00Z') });
    const manifest = `${run.dir}/manifest.json`;
    const saved = await fs.readFile(manifest);
    await fs.rm(manifest);
    await withApi(async (url, logs) => {
      expect(await (await fetch(`${url}/readyz`)).json()).toMatchObject({ code: 'snapshot_unreadable' });
      expect(logs().some((l) => l['file'] === manifest)).toBe(true);
    });
    await fs.writeFile(manifest, saved);
    await withApi(async (url) => {
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
    });
  });
});
