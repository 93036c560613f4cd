// npm run bench:short-windows -- --warehouse DIR [--streams 20]
// What a short window (5m, 15m: computed on demand, docs/api.md "Short windows") costs through the
// API against the snapshot's windows, on a warehouse with a published snapshot (30 days × 100
// streams: `generate --hours 720 --sessions 3000 --customers c01,…,c10 --streams 10`, then
// `pipeline`; under the shared bench lock). The server runs in its own process (`cli serve`). For
// each of `--streams` streams, in this order (so every answer is the first of its URL: no response
// cache), the latency of:
//   1h          GET /telemetry/metrics/:id?window=1h (the snapshot's memory)
//   1h filter   the same with a filter (the breakdown SQL over the snapshot's session class files)
//   5m first    window=5m: the stream's first short window question of the snapshot (its last 15
//               minutes of reports read from the landed files and classed, then the breakdown SQL)
//   5m cached   window=5m with a filter (the classes kept: the breakdown SQL only)
//   15m cached  window=15m with another filter
//   5m again    the first URL again (the response cache)
// and, as the floor of any computation of a short window, a bare DuckDB count of the stream's
// reports with ts in (asOf − 15 min, asOf] read from the same landed files, in this process.
import path from 'node:path';
import fs from 'node:fs/promises';
import { Command } from 'commander';
import { PROJECT_ROOT } from '../lib/version.ts';
import { warehouseLayout } from '../warehouse/layout.ts';
import { publishedDir, readCurrent, readSnapshotManifest, snapshotFiles } from '../warehouse/snapshots/index.ts';
import { issueToken, tokenSecret } from '../api/tokens.ts';
import { loadConfig } from '../lib/config.ts';
import { Db } from '../warehouse/duckdb/index.ts';
import { fileList, quotedString } from '../warehouse/duckdb/index.ts';
import { inputsWithin } from '../warehouse/reads/index.ts';
import { median } from './report.ts';
import { startChild, stopChild } from './servers.ts';

const opts = new Command()
  .requiredOption('--warehouse <dir>', 'warehouse with a published snapshot')
  .option('--streams <n>', 'streams asked (spread over the customers)', '20')
  .parse()
  .opts<{ warehouse: string; streams: string }>();

const dir = path.resolve(opts.warehouse);
const layout = warehouseLayout(dir);
const outDir = path.join(PROJECT_ROOT, 'bench', 'output');
await fs.mkdir(outDir, { recursive: true });
const current = await readCurrent(layout);
if (!current) throw new Error(`no published snapshot in ${dir}`);
const manifest = await readSnapshotManifest(snapshotFiles(publishedDir(layout, current.snapshot)).manifest);
const asOfMs = Date.parse(manifest.asOf);
const operator = await issueToken(await tokenSecret(layout, null), { role: 'operator' }, 7200);

const api = await startChild(outDir, ['bin/p2ptel.js', 'serve', '--warehouse', dir, '--port', '0'], /API listening on (\S+)/, { LOG_LEVEL: 'warn' });
async function timed(url: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${api.url}${url}`, { headers: { Authorization: `Bearer ${operator}` } });
  await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return performance.now() - started;
}

const listed = (await (await fetch(`${api.url}/telemetry/streams?window=1h`, { headers: { Authorization: `Bearer ${operator}` } })).json()) as { streams: string[] };
// Spread over the customers: the i-th stream of each customer in turn.
const byCustomer = new Map<string, string[]>();
for (const id of listed.streams) byCustomer.set(id.split(':')[0]!, [...(byCustomer.get(id.split(':')[0]!) ?? []), id]);
const streams: string[] = [];
for (let i = 0; streams.length < Number(opts.streams) && i < 100; i++) for (const ids of byCustomer.values()) if (ids[i] && streams.length < Number(opts.streams)) streams.push(ids[i]!);

const CASES = {
  '1h': (id: string) => `/telemetry/metrics/${id}?window=1h`,
  '1h filter': (id: string) => `/telemetry/metrics/${id}?window=1h&filter=device:mobile`,
  '5m first': (id: string) => `/telemetry/metrics/${id}?window=5m`,
  '5m cached': (id: string) => `/telemetry/metrics/${id}?window=5m&filter=device:mobile`,
  '15m cached': (id: string) => `/telemetry/metrics/${id}?window=15m&filter=!device:tv`,
  '5m again': (id: string) => `/telemetry/metrics/${id}?window=5m`,
} as const;
const times: Record<string, number[]> = Object.fromEntries(Object.keys(CASES).map((k) => [k, []]));
times['bare 15 min read'] = [];

const config = loadConfig({ overrides: { WAREHOUSE_DIR: dir }, env: { DUCKDB_THREADS: '1' } });
const db = await Db.open(config.duckdb, path.join(layout.tmp, 'bench-short-windows'));
try {
  for (const id of streams) {
    for (const [name, url] of Object.entries(CASES)) times[name]!.push(await timed(url(id)));
    const p = manifest.partitions.find((x) => x.customerId === id.split(':')[0])!;
    const files = inputsWithin({ files: p.files.map((f) => path.join(layout.rawReports, f.path)), presentColumns: p.presentColumns }, asOfMs - 900_000, asOfMs).files;
    const started = performance.now();
    await db.withSession((s) =>
      s.all(
        `SELECT count(*) AS n FROM read_parquet(${fileList(files)}, union_by_name = true, hive_partitioning = false)
         WHERE streamId = ${quotedString(id)} AND CAST(ts AS TIMESTAMP) > make_timestamp(CAST(${(asOfMs - 900_000) * 1000} AS BIGINT)) AND CAST(ts AS TIMESTAMP) <= make_timestamp(CAST(${asOfMs * 1000} AS BIGINT))`,
      ),
    );
    times['bare 15 min read']!.push(performance.now() - started);
  }
} finally {
  await db.close();
  await stopChild(api);
}

const base = median(times['1h filter']!);
console.log(`snapshot ${current.snapshot} asOf ${manifest.asOf}; ${streams.length} streams of ${byCustomer.size} customers`);
for (const [name, xs] of Object.entries(times)) {
  console.log(`${name.padEnd(18)} p50 ${median(xs).toFixed(1).padStart(7)} ms  max ${Math.max(...xs).toFixed(1).padStart(7)} ms  p50 / 1h filter ${(median(xs) / base).toFixed(2)}`);
}

