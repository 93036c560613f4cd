// Several collectors on one warehouse: each has its own spool (a second process on the same spool
// is refused), their landed files never collide even for the same partition, and the landing
// area holds every report of both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { startTestCollector, sampleReport, collectorConfig, type TestCollector } from '../helpers/collector.ts';
import { startCollector, type RunningCollector } from '../../collector/server.ts';
import { Spool, SpoolBusyError } from '../../collector/spool.ts';
import { silentLogger } from '../../lib/log.ts';
import { listFiles } from '../../lib/fsx.ts';

let a: TestCollector;
let b: RunningCollector;

beforeAll(async () => {
  a = await startTestCollector();
  b = await startCollector(collectorConfig(a.wh.root, path.join(a.wh.root, 'spool', 'second')), silentLogger);
}, 60_000);

afterAll(async () => {
  await b?.close();
  await a?.close();
});

describe('several collectors sharing a warehouse', () => {
  it('land into the same partition under names that never collide', async () => {
    const ts = new Date(Date.now() - 60_000);
    const body = (from: number) => JSON.stringify({ reports: Array.from({ length: 20 }, (_, i) => sampleReport('acme:live-main', ts, from + i, { reportId: `r-${from + i}` })) });
    const headers = { 'Content-Type': 'application/json', 'X-Ingest-Key': a.keys['acme']! };
    // The same segment number (1) in both spools, the same partition.
    expect((await a.post(body(0))).status).toBe(202);
    const res = await fetch(`${b.url}/v1/session-reports`, { method: 'POST', headers, body: body(100) });
    expect(res.status).toBe(202);
    await a.collector.flush();
    await b.flush();
    const files = await listFiles(a.wh.layout.rawReports, '.parquet');
    expect(files).toHaveLength(2);
    expect(new Set(files.map((f) => path.dirname(f))).size).toBe(1);
    expect(a.collector.deps.spool.id).not.toBe(b.deps.spool.id);
    const landed = await a.landed();
    expect(landed.map((r) => r.reportId).sort()).toEqual([...Array.from({ length: 20 }, (_, i) => `r-${i}`), ...Array.from({ length: 20 }, (_, i) => `r-${100 + i}`)].sort());
  });

  it('refuses a second live collector on the same spool folder', async () => {
    await expect(Spool.open(a.spoolDir, silentLogger)).rejects.toBeInstanceOf(SpoolBusyError);
  });
});
