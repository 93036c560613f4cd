// CSV exports neutralise formula-like cells (issue 16, point 7): an SDK string starting with =, +,
// -, @, tab or carriage return gets a leading apostrophe (OWASP), other strings and every number
// stay as they are; NDJSON, Parquet and Arrow keep the values exactly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { landingPath, writeReportsParquet, type HandReport } from '../helpers/reports.ts';
import { apiConfig } from '../helpers/api.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { silentLogger } from '../../lib/log.ts';
import { addTenant } from '../../control/tenants.ts';
import { issueToken, tokenSecret } from '../../api/tokens.ts';

const VIEWERS = ['=HYPERLINK("http://evil.example","x")', '+1+1', '-2+3', '@SUM(A1)', '\tTAB', '\rCR', 'plain', 'a=b'];
const EXPECTED_CSV_CELLS = ["'=HYPERLINK(\"http://evil.example\",\"x\")", "'+1+1", "'-2+3", "'@SUM(A1)", "'\tTAB", "'\rCR", 'plain', 'a=b'];

let wh: TestWarehouse;
let api: RunningApi;
let token: string;

beforeAll(async () => {
  wh = await openTestWarehouse();
  const rows: HandReport[] = VIEWERS.map((viewerId, i) => ({
    reportId: `r${i}`,
    sessionId: `s${i}`,
    streamId: 'csv:live',
    ts: `2026-11-20T11:0${i}:00Z`,
    viewerId,
    sdkVersion: i === 0 ? '-1.0' : '3.2.1',
    bytesFallback: 100 + i,
    bufferHealth: 2.5,
  }));
  await writeReportsParquet(wh.db, landingPath(wh.root, 'csv', '2026-11-20', 'a.parquet'), rows);
  await runPipeline(wh, { asOf: new Date('2026-11-20T12:00:00Z') });
  const tenant = await addTenant(wh.layout, { customerId: 'csv', name: 'CSV', cdnPricePerGb: null, savingsSharePct: 25 });
  token = await issueToken(await tokenSecret(wh.layout, null), { role: 'tenant', tenant }, 3600);
  api = await startApi(apiConfig(wh.root), silentLogger);
}, 120_000);

afterAll(async () => {
  await api?.close();
  await wh?.close();
});

/** RFC 4180 fields of a CSV text (quotes doubled inside quoted fields; CR/LF kept inside quotes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\n') row.push(field), rows.push(row), (row = []), (field = '');
    else field += c;
  }
  return rows;
}

describe('CSV formula injection', () => {
  it('neutralises formula-like strings in CSV only, numbers untouched', async () => {
    const get = (format: string) => fetch(`${api.url}/telemetry/export?streamId=csv:live&window=24h&format=${format}`, { headers: { Authorization: `Bearer ${token}` } });
    const csv = parseCsv(await (await get('csv')).text());
    const header = csv[0]!;
    const col = (name: string) => header.indexOf(name);
    const body = csv.slice(1).sort((a, b) => a[col('reportId')]!.localeCompare(b[col('reportId')]!));
    expect(body.map((r) => r[col('viewerId')])).toEqual(EXPECTED_CSV_CELLS);
    expect(body[0]![col('sdkVersion')]).toBe("'-1.0");
    expect(body.map((r) => r[col('bytesFallback')])).toEqual(VIEWERS.map((_, i) => String(100 + i)));
    expect(body.map((r) => r[col('bufferHealth')])).toEqual(VIEWERS.map(() => '2.5'));
    const ndjson = (await (await get('ndjson')).text()).trim().split('\n').map((l) => JSON.parse(l) as { reportId: string; viewerId: string });
    expect(ndjson.sort((a, b) => a.reportId.localeCompare(b.reportId)).map((r) => r.viewerId)).toEqual(VIEWERS);
  });
});
