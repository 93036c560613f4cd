// Every telemetry route's figures, over real HTTP, against the snapshot's files and, for a sample
// of streams and every window, an independent SQL computation over the raw files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableFromIPC } from 'apache-arrow';
import { startTestApi, AS_OF, type TestApi } from '../helpers/api.ts';
import { expectSameFigure, expectSameRows, norm, type Row } from '../helpers/independent.ts';
import { currentSnapshot, readStreamSummaries } from '../../warehouse/snapshots/snapshot-read.ts';
import { expectedSeries } from '../helpers/series.ts';
import { WINDOWS, type WindowName } from '../../warehouse/figures/windows.ts';
import { timestampParam } from '../../warehouse/duckdb/param-values.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import fs from 'node:fs/promises';
import path from 'node:path';

let t: TestApi;
const SAMPLE = ['acme:live-main', 'acme:vod-library', 'acme:live-sports'];

beforeAll(async () => {
  t = await startTestApi();
}, 240_000);

afterAll(async () => {
  await t?.close();
});

type Json = Record<string, unknown>;
const body = (r: { json: unknown }) => r.json as Json;

describe('GET /telemetry/streams', () => {
  it('lists exactly the caller\'s streams with a report in the window, sorted, with the snapshot\'s summaries', async () => {
    const snap = (await currentSnapshot(t.wh.layout))!;
    const all = await readStreamSummaries(t.wh.db, snap);
    for (const w of WINDOWS) {
      const plain = await t.get(`/telemetry/streams?window=${w.name}`, t.tokens.acme);
      expect(plain.status).toBe(200);
      const theirs = (await (await t.independent()).summaries(w.name)).filter((r) => String(r['streamId']).startsWith('acme:'));
      expect(body(plain)['streams']).toEqual(theirs.map((r) => r['streamId']));

      const detail = await t.get(`/telemetry/streams?window=${w.name}&detail=1`, t.tokens.acme);
      const rows = body(detail)['streams'] as Row[];
      expectSameRows(rows, theirs, `streams ${w.name}`);
      const fromFiles = all.filter((s) => s.windowName === w.name && s.streamId.startsWith('acme:'));
      expect(rows).toEqual(fromFiles.map(({ windowName: _w, lastSeenAt, ...rest }) => ({ ...rest, lastSeenAt: lastSeenAt?.toISOString() ?? null })));
    }
  });

  it('defaults to 24h, and an operator sees every customer', async () => {
    const r = await t.get('/telemetry/streams', t.tokens.operator);
    const theirs = await (await t.independent()).summaries('24h');
    expect(body(r)).toMatchObject({ window: '24h', asOf: AS_OF.toISOString() });
    expect(body(r)['streams']).toEqual(theirs.map((x) => x['streamId']));
    expect((body(r)['streams'] as string[]).some((s) => s.startsWith('globex:'))).toBe(true);
  });
});

describe('GET /telemetry/metrics/:streamId', () => {
  for (const streamId of SAMPLE) {
    it(`${streamId}: every window equals the independent computation`, async () => {
      for (const w of WINDOWS) {
        const r = await t.get(`/telemetry/metrics/${encodeURIComponent(streamId)}?window=${w.name}`, t.tokens.acme);
        expect(r.status).toBe(200);
        const [theirs] = await (await t.independent()).summaries(w.name, streamId);
        const fields = ['totalSessions', 'totalBytesOffloaded', 'totalBytesFallback', 'avgOffloadRatio', 'avgPeerCount', 'avgBufferHealth'];
        for (const f of fields) expectSameFigure(body(r)[f], theirs ? theirs[f] : 0, `${streamId} ${w.name} ${f}`);
        expect(body(r)['streamId']).toBe(streamId);
      }
    });
  }

  it('gives zeros, not 404, for a stream with reports but none in the window', async () => {
    // The first customer's last stream ended early: nothing in the last hour.
    expect(await (await t.independent()).summaries('1h', 'acme:live-sports')).toEqual([]);
    const r = await t.get('/telemetry/metrics/acme:live-sports?window=1h', t.tokens.acme);
    expect(r.status).toBe(200);
    expect(body(r)).toMatchObject({ streamId: 'acme:live-sports', totalSessions: 0, totalBytesOffloaded: 0, avgOffloadRatio: 0 });
  });
});

describe('GET /telemetry/metrics (platform-wide, operators)', () => {
  it('equals the independent computation in every window', async () => {
    for (const w of WINDOWS) {
      const r = await t.get(`/telemetry/metrics?window=${w.name}`, t.tokens.operator);
      expect(r.status).toBe(200);
      const theirs = await (await t.independent()).platform(w.name);
      for (const k of Object.keys(theirs)) expectSameFigure(body(r)[k], theirs[k], `platform ${w.name} ${k}`);
    }
  });
});

describe('GET /telemetry/timeseries', () => {
  /** The expected series (test/helpers/series.ts): every aligned bucket from..to, the independent figures or zeros. */
  const expected = async (streamId: string, window: WindowName, size: number): Promise<Json> =>
    (await expectedSeries(await t.independent(), streamId, window, size)) as Json;

  const cases: [string, WindowName, number][] = [
    ['acme:live-main', '1h', 60],
    ['acme:live-main', '24h', 600],
    ['acme:vod-library', '7d', 3600],
    ['acme:live-sports', '30d', 21600],
    ['acme:live-main', 'all', 86400],
    // `all` starts at the bucket holding the stream's first minute, looked up for all of acme's
    // streams at once: two more streams, and sizes that cut the first hour and day.
    ['acme:vod-library', 'all', 3600],
    ['acme:live-sports', 'all', 600],
    // Sizes no rollup precomputes: computed on demand with the shared SQL.
    ['acme:live-main', '24h', 900],
    ['acme:vod-library', '7d', 5400],
    ['acme:live-main', 'all', 7777],
  ];
  for (const [streamId, window, size] of cases) {
    it(`${streamId} ${window} at ${size} s`, async () => {
      const r = await t.get(`/telemetry/timeseries?streamId=${streamId}&window=${window}&bucketSeconds=${size}`, t.tokens.acme);
      expect(r.status, r.text).toBe(200);
      const want = await expected(streamId, window, size);
      const got = body(r);
      expect({ ...got, buckets: undefined }).toEqual({ ...want, buckets: undefined });
      expectSameRows(got['buckets'] as Row[], want['buckets'] as Row[], `${streamId} ${window} ${size}`);
      expect((got['buckets'] as Row[]).some((b) => (b['sessions'] as number) > 0)).toBe(true);
    });
  }

  it('defaults to 600 s buckets over 24h', async () => {
    const r = await t.get('/telemetry/timeseries?streamId=acme:live-main', t.tokens.acme);
    expect(body(r)).toMatchObject({ window: '24h', bucketSeconds: 600 });
    expect((body(r)['buckets'] as Row[]).length).toBe(24 * 6 + 1);
  });

  it('refuses more than 10 000 buckets with a 400 that says so', async () => {
    const r = await t.get('/telemetry/timeseries?streamId=acme:live-main&window=30d&bucketSeconds=60', t.tokens.acme);
    expect(r.status).toBe(400);
    expect(body(r)).toMatchObject({ code: 'too_many_buckets', maximum: 10000 });
  });
});

describe('GET /telemetry/export', () => {
  async function independentExport(streamId: string, window: WindowName): Promise<Row[]> {
    const seconds = WINDOWS.find((w) => w.name === window)!.seconds;
    const lower = seconds === null ? null : new Date(AS_OF.getTime() - seconds * 1000);
    return (await t.independent()).query(
      `SELECT reportId, sessionId, epoch_us(ts) AS ts_us, bytesOffloaded, bytesFallback, peerCount, bufferHealth,
              to_json(fallbackReasons)::VARCHAR AS reasons, cohort, final
       FROM ind_reports WHERE streamId = $stream AND ($lower IS NULL OR ts > $lower) ORDER BY ts, reportId`,
      { stream: streamId, lower: lower ? timestampParam(lower) : null },
    );
  }

  it.each([
    ['a day at a time', null],
    // Every day cut into its most slices (8 of 3 hours): slice edges fall between copies of
    // nothing (a report's copies share ts) and the order runs on across them.
    ['3 hours at a time', 1],
  ] as const)('csv, ndjson, parquet and arrow hold the same deduplicated reports as the raw files (%s)', async (_name, sliceBytes) => {
    const exports = t.api.deps.config.api.exports;
    const original = exports.sliceBytes;
    if (sliceBytes !== null) exports.sliceBytes = sliceBytes;
    try {
      await exportsMatch();
    } finally {
      exports.sliceBytes = original;
    }
  });

  async function exportsMatch(): Promise<void> {
    const streamId = 'acme:vod-library';
    const theirs = await independentExport(streamId, '24h');
    expect(theirs.length).toBeGreaterThan(100);
    const dir = await fs.mkdtemp(path.join(t.wh.root, 'dl-'));
    for (const format of ['csv', 'ndjson', 'parquet', 'arrow'] as const) {
      const res = await fetch(`${t.url}/telemetry/export?streamId=${streamId}&window=24h&format=${format}`, {
        headers: { Authorization: `Bearer ${t.tokens.acme}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^attachment; filename="acme_vod-library_24h\\.(${format === 'arrow' ? 'arrows' : format})"$`));
      const bytes = Buffer.from(await res.arrayBuffer());
      const file = path.join(dir, `export.${format}`);
      await fs.writeFile(file, bytes);
      let ours: Row[];
      if (format === 'arrow') {
        const table = tableFromIPC(bytes);
        expect(table.schema.fields.map((f) => f.name)).toContain('fallbackReasons');
        ours = table.toArray().map((r) => {
          const o = r.toJSON() as Row;
          return {
            reportId: o['reportId'], sessionId: o['sessionId'], ts_us: null, bytesOffloaded: o['bytesOffloaded'], bytesFallback: o['bytesFallback'],
            peerCount: o['peerCount'], bufferHealth: o['bufferHealth'],
            reasons: JSON.stringify(Object.fromEntries(o['fallbackReasons'] as Map<string, number>)), cohort: o['cohort'], final: o['final'],
          };
        });
        // Arrow carries ts as raw microseconds, batch by batch.
        const micros = table.batches.flatMap((batch) => Array.from(batch.getChild('ts')!.data[0]!.values as BigInt64Array));
        ours.forEach((row, i) => (row['ts_us'] = micros[i]));
      } else {
        const reader =
          format === 'csv'
            ? `read_csv(${quotedString(file)}, header = true, all_varchar = true)`
            : format === 'ndjson'
              ? `read_json(${quotedString(file)}, format = 'newline_delimited', columns = {reportId: 'VARCHAR', sessionId: 'VARCHAR', ts: 'VARCHAR', bytesOffloaded: 'BIGINT', bytesFallback: 'BIGINT', peerCount: 'INTEGER', bufferHealth: 'DOUBLE', fallbackReasons: 'JSON', cohort: 'VARCHAR', final: 'BOOLEAN'})`
              : `read_parquet(${quotedString(file)})`;
        const tsExpr = format === 'parquet' ? 'epoch_us(ts)' : `epoch_us(strptime(ts, '%Y-%m-%dT%H:%M:%S.%fZ'))`;
        ours = await (await t.independent()).query(
          `SELECT reportId, sessionId, ${tsExpr} AS ts_us, CAST(bytesOffloaded AS BIGINT) AS bytesOffloaded, CAST(bytesFallback AS BIGINT) AS bytesFallback,
                  CAST(peerCount AS INTEGER) AS peerCount, CAST(bufferHealth AS DOUBLE) AS bufferHealth,
                  ${format === 'parquet' ? 'to_json(fallbackReasons)::VARCHAR' : 'json(fallbackReasons)::VARCHAR'} AS reasons, cohort, CAST(final AS BOOLEAN) AS final
           FROM ${reader}`,
        );
      }
      expectSameRows(ours, theirs, `export ${format}`);
    }
  }

  it('has the header of every contract column, in order', async () => {
    const r = await t.get('/telemetry/export?streamId=acme:live-main&window=1h', t.tokens.acme);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(r.text.split('\n')[0]).toBe(
      'reportId,sessionId,viewerId,streamId,ts,intervalMs,seq,final,cohort,contentType,bytesOffloaded,bytesFallback,bytesUploaded,peerCount,bufferHealth,stallCount,stallMs,watchMs,startupMs,bitrateKbps,p2pConnAttempts,p2pConnSuccesses,signalingErrors,validationFailures,busyPeerEvents,fallbackReasons,deliveryMode,bytesByPath,device,region,sdkVersion,signalingVersion',
    );
  });
});
