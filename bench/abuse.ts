// npm run bench:abuse -- [--warehouse DIR] [--sessions 36000] [--clients 20] [--format arrow]
//                          [--phases deployed,unbounded] [--no-single]
// One tenant exports a large stream (about 1 M reports) from many clients at once while another
// tenant's cheap reads are timed: the API's resident memory added (from /proc/<pid>/status) and the
// other tenant's latency (p50/p99/max, from a probe in its own process), first with the limits as
// deployed (clients retry after the 429's Retry-After), then with every export admitted at once
// (the memory bound then comes from bounded batches and back-pressure alone). The reference in the
// same run: the same reads on the idle server, and one export alone.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { Command } from 'commander';
import { loadConfig } from '../lib/config.ts';
import { silentLogger } from '../lib/log.ts';
import { PROJECT_ROOT } from '../lib/version.ts';
import { openJobDeps } from '../jobs/deps.ts';
import { runPipeline } from '../jobs/pipeline.ts';
import { generateReports } from '../warehouse/sample/index.ts';
import { discoverLanding } from '../warehouse/landing/index.ts';
import { addTenant, findTenant } from '../control/tenants.ts';
import { issueToken, tokenSecret } from '../api/tokens.ts';
import { quotedString } from '../warehouse/duckdb/index.ts';
import { snapshotFiles } from '../warehouse/snapshots/index.ts';
import { writeResult } from './report.ts';
import { startChild, type ChildServer } from './servers.ts';

const opts = new Command()
  .option('--warehouse <dir>', 'warehouse folder (generated once, kept)', path.join(PROJECT_ROOT, 'bench', 'output', 'abuse-warehouse'))
  .option('--sessions <n>', 'sessions of the big stream (36000 give about 1 M reports)', '36000')
  .option('--clients <n>', 'concurrent export clients', '20')
  .option('--format <f>', 'export format', 'arrow')
  .option('--phases <list>', 'phases to run, comma-separated: deployed (limits as deployed), unbounded (every export admitted)', 'deployed,unbounded')
  .option('--no-single', 'skip the reference export alone on an idle server')
  .parse()
  .opts<{ warehouse: string; sessions: string; clients: string; format: string; phases: string; single: boolean }>();
const PHASES = new Set(opts.phases.split(',').map((p) => p.trim()));
for (const p of PHASES) if (p !== 'deployed' && p !== 'unbounded') throw new Error(`--phases: unknown phase ${p} (deployed, unbounded)`);

const dir = path.resolve(opts.warehouse);
const AS_OF = new Date('2026-11-08T00:00:00Z');
const deps = await openJobDeps(loadConfig({ overrides: { WAREHOUSE_DIR: dir } }), silentLogger);
if ((await discoverLanding(deps.layout)).files.length === 0) {
  process.stderr.write(`generating ${opts.sessions} sessions of big:live-main over 7 days into ${dir}\n`);
  const base = { start: new Date('2026-11-01T00:00:00Z'), hours: 7 * 24, streams: 1 };
  await generateReports(deps.db, deps.layout, { ...base, customers: ['big'], sessions: Number(opts.sessions), seed: 3 });
  await generateReports(deps.db, deps.layout, { ...base, customers: ['other'], sessions: 500, seed: 4 });
}
const run = await runPipeline(deps, { asOf: AS_OF });
const [row] = await deps.db.withSession((s) =>
  s.all<{ reports: number }>(
    `SELECT reports FROM read_parquet(${quotedString(snapshotFiles(run.dir).summaries('big'))}) WHERE windowName = 'all' AND streamId = 'big:live-main'`,
  ),
);
const reports = row!.reports;
const secret = await tokenSecret(deps.layout, null);
const tokenOf = async (customerId: string) => {
  const tenant = (await findTenant(deps.layout, customerId)) ?? (await addTenant(deps.layout, { customerId, name: customerId, cdnPricePerGb: null, savingsSharePct: 25 }));
  return issueToken(secret, { role: 'tenant', tenant }, 6 * 3600);
};
const bigToken = await tokenOf('big');
const otherToken = await tokenOf('other');
await deps.close();

const exportUrl = (api: ChildServer) => `${api.url}/telemetry/export?streamId=big:live-main&window=all&format=${opts.format}`;
const probeUrl = (api: ChildServer) => `${api.url}/telemetry/metrics/other:live-main?window=24h`;

async function rssKb(pid: number, field = 'VmRSS'): Promise<number> {
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(await fs.readFile(`/proc/${pid}/status`, 'utf8'))![1]);
}

/** One export, downloaded as fast as possible; retried after Retry-After while it is refused. */
function download(url: string): Promise<{ bytes: number; refusals: number; ms: number }> {
  const started = performance.now();
  let refusals = 0;
  const attempt = (): Promise<{ bytes: number; refusals: number; ms: number }> =>
    new Promise((resolve, reject) => {
      http
        .get(url, { agent: false, headers: { Authorization: `Bearer ${bigToken}` } }, (res) => {
          if (res.statusCode === 429 || res.statusCode === 503) {
            refusals++;
            res.resume();
            const wait = Number(res.headers['retry-after'] ?? 1) * 1000;
            // Honour Retry-After, with jitter so that the waiting clients do not return together.
            setTimeout(() => attempt().then(resolve, reject), wait * (0.5 + Math.random()));
            return;
          }
          if (res.statusCode !== 200) return reject(new Error(`export answered ${res.statusCode}`));
          let bytes = 0;
          res.on('data', (d: Buffer) => (bytes += d.length));
          res.on('end', () => resolve({ bytes, refusals, ms: performance.now() - started }));
          res.on('error', reject);
        })
        .on('error', reject);
    });
  return attempt();
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((sorted.length * p) / 100) - 1)]!;
}

/** Latencies of the other tenant's read while `during` runs (a probe in its own process). */
async function probe<T>(api: ChildServer, during: () => Promise<T>): Promise<{ result: T; p50: number; p99: number; max: number; n: number; errors: number }> {
  const child = spawn(process.execPath, ['bin/run-ts.js', 'bench/latency-probe.ts', probeUrl(api), otherToken], { cwd: PROJECT_ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  while (!out.includes('probing')) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 300));
  const result = await during();
  child.stdin.end();
  await new Promise((r) => child.once('exit', r));
  const { times, statusErrors } = JSON.parse(out.slice(out.indexOf('{'))) as { times: number[]; statusErrors: number };
  const sorted = times.slice(20).sort((a, b) => a - b); // the first few warm the connection
  return { result, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN, n: sorted.length, errors: statusErrors };
}

async function phase(name: string, env: Record<string, string>) {
  const api = await startChild(dir, ['bin/p2ptel.js', 'serve', '--warehouse', dir, '--port', '0'], /API listening on (\S+)/, { LOG_LEVEL: 'warn', ...env });
  const pid = api.child.pid!;
  try {
    const idle = await probe(api, () => new Promise((r) => setTimeout(r, 3000)));
    const readyKb = await rssKb(pid);
    let peakKb = readyKb;
    const sampler = setInterval(() => void rssKb(pid).then((k) => (peakKb = Math.max(peakKb, k))).catch(() => {}), 50);
    const started = performance.now();
    const busy = await probe(api, () => Promise.all(Array.from({ length: Number(opts.clients) }, () => download(exportUrl(api)))));
    const totalS = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const downloads = busy.result;
    const r = {
      phase: name,
      env,
      rssAtReadyMb: Math.round(readyKb / 1024),
      rssAddedPeakMb: Math.round((peakKb - readyKb) / 1024),
      exports: downloads.length,
      bytesEach: downloads[0]!.bytes,
      refusals429: downloads.reduce((a, d) => a + d.refusals, 0),
      allDoneSeconds: Math.round(totalS * 10) / 10,
      otherTenantIdle: { p50: idle.p50, p99: idle.p99, max: idle.max, n: idle.n },
      otherTenantDuring: { p50: busy.p50, p99: busy.p99, max: busy.max, n: busy.n, errors: busy.errors },
    };
    process.stderr.write(`${JSON.stringify(r)}\n`);
    return r;
  } finally {
    api.child.kill('SIGTERM');
    await new Promise((r) => api.child.once('exit', r));
  }
}

// The reference: one export alone on an idle server.
const single = !opts.single ? null : await (async () => {
  const api = await startChild(dir, ['bin/p2ptel.js', 'serve', '--warehouse', dir, '--port', '0'], /API listening on (\S+)/, { LOG_LEVEL: 'warn' });
  try {
    const d = await download(exportUrl(api));
    return { seconds: Math.round(d.ms / 100) / 10, mb: Math.round(d.bytes / 2 ** 20) };
  } finally {
    api.child.kill('SIGTERM');
    await new Promise((r) => api.child.once('exit', r));
  }
})();
const phases = [];
if (PHASES.has('deployed')) phases.push(await phase('limits as deployed', {}));
if (PHASES.has('unbounded')) phases.push(await phase('all admitted at once', { API_EXPORTS_MAX: opts.clients, API_EXPORTS_PER_TENANT: opts.clients }));

const ms = (x: number) => `${x.toFixed(1)} ms`;
const lines = [
  `Abuse benchmark: ${opts.clients} concurrent ${opts.format} exports of big:live-main (${reports} reports, ${Math.round((phases[0]?.bytesEach ?? 0) / 2 ** 20) || single?.mb} MB each), window all`,
  single ? `  one export alone: ${single.seconds} s` : '  one export alone: not run (--no-single)',
];
for (const p of phases) {
  lines.push(
    `  ${p.phase}: all ${p.exports} done in ${p.allDoneSeconds} s (${p.refusals429} answers 429/503 then retried)`,
    `    API RSS at ready ${p.rssAtReadyMb} MB, peak added ${p.rssAddedPeakMb} MB (goal ≤ 300 MB)`,
    `    other tenant GET /telemetry/metrics/:id idle p50 ${ms(p.otherTenantIdle.p50)} p99 ${ms(p.otherTenantIdle.p99)}; during p50 ${ms(p.otherTenantDuring.p50)} p99 ${ms(p.otherTenantDuring.p99)} max ${ms(p.otherTenantDuring.max)} over ${p.otherTenantDuring.n} requests (goal p99 ≤ 50 ms)`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
await writeResult('abuse', { reports, clients: Number(opts.clients), format: opts.format, single, phases });
