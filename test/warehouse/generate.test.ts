// The synthetic data generator: deterministic for a seed, and realistic in the ways every later
// figure depends on (checked on the files it writes, with plain SQL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { GenerateError, generateReports, type GenerateOptions } from '../../warehouse/sample/generate.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { listFiles } from '../../lib/fsx.ts';
import { hostScratchDir } from '../../warehouse/layout.ts';

const OPTIONS: GenerateOptions = {
  customers: ['acme', 'globex', 'initech'],
  streams: 4,
  sessions: 300,
  start: new Date('2026-11-20T06:00:00Z'),
  hours: 6,
  seed: 7,
};

let a: TestWarehouse;
let b: TestWarehouse;

type Row = Record<string, unknown>;
async function q(sql: string): Promise<Row[]> {
  return a.db.withSession((s) => s.all<Row>(sql));
}
let all: string;

beforeAll(async () => {
  a = await openTestWarehouse();
  b = await openTestWarehouse();
  await generateReports(a.db, a.layout, OPTIONS);
  await generateReports(b.db, b.layout, OPTIONS);
  all = `read_parquet(${quotedString(path.join(a.layout.rawReports, '*', '*', '*.parquet'))}, filename = true, hive_partitioning = true)`;
}, 120_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
});

async function checksums(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of await listFiles(root, '.parquet')) {
    out[path.relative(root, f)] = crypto.createHash('sha256').update(await fs.readFile(f)).digest('hex');
  }
  return out;
}

describe('generate', () => {
  it('is deterministic: the same seed and arguments write byte-identical files', async () => {
    const ca = await checksums(a.layout.rawReports);
    expect(Object.keys(ca).length).toBeGreaterThan(0);
    expect(await checksums(b.layout.rawReports)).toEqual(ca);
  });

  it('lands files in customer=/date= partitions whose rows match the folder', async () => {
    const [r] = await q(
      `SELECT count(*) FILTER (WHERE split_part(streamId, ':', 1) <> customer) AS wrong_customer,
              count(*) FILTER (WHERE CAST(ts AS DATE) <> CAST(date AS DATE)) AS wrong_date,
              count(DISTINCT customer) AS customers, count(DISTINCT streamId) AS streams
       FROM ${all}`,
    );
    expect(r!['wrong_customer']).toBe(0);
    expect(r!['wrong_date']).toBe(0);
    expect(r!['customers']).toBe(3);
    expect(r!['streams']).toBe(12);
  });

  it('has a CDN-only control cohort of about 10 % of sessions, with no peer bytes', async () => {
    const [r] = await q(
      `SELECT count(DISTINCT sessionId) FILTER (WHERE cohort = 'control') / count(DISTINCT sessionId) AS share,
              max(bytesOffloaded) FILTER (WHERE cohort = 'control') AS max_off,
              max(peerCount) FILTER (WHERE cohort = 'control') AS max_peers
       FROM ${all}`,
    );
    expect(r!['share']).toBeGreaterThan(0.06);
    expect(r!['share']).toBeLessThan(0.14);
    expect(r!['max_off']).toBe(0);
    expect(r!['max_peers']).toBe(0);
  });

  it('ramps up from a cold start: few peers and a low offload share in the first minute', async () => {
    const rows = await q(
      `SELECT seq >= 2 AS steady,
              sum(bytesOffloaded) / sum(bytesOffloaded + bytesFallback) AS share,
              avg(peerCount) AS peers
       FROM ${all} WHERE cohort = 'p2p' GROUP BY 1 ORDER BY 1`,
    );
    const [cold, steady] = rows;
    expect(cold!['share']).toBeLessThan(0.25);
    expect(steady!['share']).toBeGreaterThan(0.45);
    expect(cold!['peers']).toBeLessThan(2);
    expect(steady!['peers']).toBeGreaterThan(3);
  });

  it('reports every 30 s with a short final report, over skewed session lengths', async () => {
    const [r] = await q(
      `SELECT count(*) FILTER (WHERE NOT final AND intervalMs <> 30000) AS odd_intervals,
              count(*) FILTER (WHERE final AND intervalMs < 30000) AS short_finals,
              count(*) FILTER (WHERE final) AS finals,
              count(*) FILTER (WHERE seq = 0 AND startupMs IS NULL) + count(*) FILTER (WHERE seq > 0 AND startupMs IS NOT NULL) AS bad_startup
       FROM ${all}`,
    );
    expect(r!['odd_intervals']).toBe(0);
    expect(r!['short_finals']).toBeGreaterThan(0.9 * (r!['finals'] as number));
    expect(r!['bad_startup']).toBe(0);
    const [d] = await q(
      `SELECT avg(reports) AS mean, median(reports) AS median, max(reports) AS longest
       FROM (SELECT sessionId, count(DISTINCT reportId) AS reports FROM ${all} GROUP BY sessionId)`,
    );
    expect(d!['mean'] as number).toBeGreaterThan(1.2 * (d!['median'] as number)); // right-skewed
    expect(d!['longest']).toBeGreaterThan(200);
  });

  it('mixes live and VOD, devices, regions, versions, stalls, errors, reasons and paths', async () => {
    const [r] = await q(
      `SELECT count(DISTINCT contentType) AS content_types, count(DISTINCT device) AS devices,
              count(DISTINCT region) AS regions, count(DISTINCT sdkVersion) AS sdks,
              count(DISTINCT signalingVersion) AS signaling,
              avg(CASE WHEN stallCount > 0 THEN 1 ELSE 0 END) AS stall_rate,
              sum(signalingErrors) AS signaling_errors, sum(validationFailures) AS validation_failures,
              sum(busyPeerEvents) AS busy, count(*) FILTER (WHERE viewerId IS NULL) AS unknown_viewers,
              count(DISTINCT deliveryMode) AS modes
       FROM ${all}`,
    );
    expect(r!['content_types']).toBe(2);
    expect(r!['devices']).toBeGreaterThanOrEqual(4);
    expect(r!['regions']).toBeGreaterThanOrEqual(4);
    expect(r!['sdks']).toBeGreaterThanOrEqual(2);
    expect(r!['signaling']).toBeGreaterThanOrEqual(2);
    expect(r!['stall_rate']).toBeGreaterThan(0.005);
    expect(r!['stall_rate']).toBeLessThan(0.06);
    expect(r!['signaling_errors']).toBeGreaterThan(0);
    expect(r!['validation_failures']).toBeGreaterThan(0);
    expect(r!['busy']).toBeGreaterThan(0);
    expect(r!['unknown_viewers']).toBeGreaterThan(0);
    expect(r!['modes']).toBe(3);
    const keys = await q(
      `SELECT DISTINCT unnest(map_keys(fallbackReasons)) AS k FROM ${all} UNION ALL SELECT DISTINCT 'path:' || unnest(map_keys(bytesByPath)) FROM ${all}`,
    );
    const names = keys.map((k) => k['k']);
    for (const k of ['no_peers', 'peer_timeout', 'low_buffer', 'peer_busy', 'validation_failed', 'path:webrtc', 'path:relay', 'path:http']) {
      expect(names).toContain(k);
    }
    const [paths] = await q(
      `SELECT count(*) FILTER (WHERE list_sum(map_values(bytesByPath)) <> bytesOffloaded + bytesFallback) AS mismatched FROM ${all}`,
    );
    expect(paths!['mismatched']).toBe(0);
  });

  it('delivers about 1 % of reports twice, the copy in another file', async () => {
    const [r] = await q(
      `SELECT count(*) AS rows, count(DISTINCT reportId) AS ids FROM ${all}`,
    );
    const dupShare = ((r!['rows'] as number) - (r!['ids'] as number)) / (r!['ids'] as number);
    expect(dupShare).toBeGreaterThan(0.005);
    expect(dupShare).toBeLessThan(0.015);
    const [same] = await q(
      `SELECT count(*) AS same_file FROM (SELECT reportId, count(DISTINCT filename) AS files, count(*) AS copies FROM ${all} GROUP BY reportId)
       WHERE copies > 1 AND files < copies`,
    );
    expect(same!['same_file']).toBe(0);
  });

  it('has one stream whose data ends early while the others run to the end', async () => {
    const rows = await q(`SELECT streamId, max(ts) AS last FROM ${all} GROUP BY streamId ORDER BY last`);
    const end = OPTIONS.start.getTime() + OPTIONS.hours * 3_600_000;
    const lasts = rows.map((x) => (x['last'] as Date).getTime());
    expect(lasts[0]!).toBeLessThan(end - 0.4 * OPTIONS.hours * 3_600_000);
    expect(lasts.slice(1).every((t) => t > end - 5 * 60_000)).toBe(true);
  });

  it('refuses to land the same generation twice, and writes nothing then', async () => {
    const before = await checksums(a.layout.rawReports);
    await expect(generateReports(a.db, a.layout, OPTIONS)).rejects.toThrow(GenerateError);
    expect(await checksums(a.layout.rawReports)).toEqual(before);
    expect(await fs.readdir(hostScratchDir(a.layout))).not.toContainEqual(expect.stringMatching(/^generate-/));
  });

  it('rejects bad options with a clear message', async () => {
    await expect(generateReports(a.db, a.layout, { ...OPTIONS, customers: ['Not Valid'] })).rejects.toThrow(/customer id/);
    await expect(generateReports(a.db, a.layout, { ...OPTIONS, streams: 0 })).rejects.toThrow();
  });
});
