// npm run bench:portal -- --warehouse DIR [--rounds 20] [--cold 3] [--probes 5] [--pages 50]
// The portal at scale, in one run, on a warehouse with a published snapshot (30 days × 100 streams,
// made as for bench:serve). Runs `p2ptel start` on it (the API, the collector and live rollups in
// one process), signs in over HTTP, and prints: each page's time (p50/p95, warm, and cold: the first
// request after a snapshot swap) against a bare node:http server answering the same bytes; the
// bytes of a first visit (page and assets, gzip'd) and of a repeat visit; the delay from a report
// acknowledged by the collector to its figure on a page open in Chromium, beside the API's own
// freshness; and start's peak RSS with no page open and with N live pages following snapshots.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { chromium } from 'playwright-core';
import { gzipSync } from 'node:zlib';
import { PROJECT_ROOT } from '../lib/version.ts';
import { median, writeResult } from './report.ts';
import { startChild, stopChild } from './servers.ts';
import { signIn, startStart, type StartedStart as Started } from './portal-start.ts';

const opts = new Command()
  .requiredOption('--warehouse <dir>', 'warehouse with a published snapshot')
  .option('--rounds <n>', 'warm requests of each page', '20')
  .option('--cold <n>', 'snapshot swaps to time cold pages on', '3')
  .option('--probes <n>', 'posted reports timed to their figure on an open page', '5')
  .option('--pages <n>', 'live pages held open for the memory figure', '50')
  .option('--without-reports', 'leave the pilot-reports page out (it composes every stream report on each new snapshot)')
  .parse()
  .opts<{ warehouse: string; rounds: string; cold: string; probes: string; pages: string; withoutReports?: boolean }>();
const say = (line: string) => process.stderr.write(`${line}\n`);
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function timed(url: string, cookie: string): Promise<{ ms: number; bytes: number; body: Buffer; headers: Headers }> {
  const t = performance.now();
  const res = await fetch(url, { headers: { Cookie: cookie, 'Accept-Encoding': 'gzip' } });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return { ms: performance.now() - t, bytes: Number(res.headers.get('content-length') ?? body.length), body, headers: res.headers };
}

let posted = 0;
async function post(s: Started, streamId: string): Promise<number> {
  const id = `bench-portal-${process.pid}-${posted++}-${Date.now()}`;
  const report = { reportId: id, sessionId: id, streamId, ts: new Date().toISOString(), intervalMs: 30000, seq: 0, final: true, cohort: 'p2p', contentType: 'live', bytesOffloaded: 3e6, bytesFallback: 1e6, peerCount: 3, bufferHealth: 12, watchMs: 30000, startupMs: 900 };
  const res = await fetch(`${s.collector}/v1/session-reports`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Ingest-Key': s.key }, body: JSON.stringify({ reports: [report] }) });
  if (res.status !== 200 && res.status !== 202) throw new Error(`collector: ${res.status}`);
  return performance.now();
}

async function rss(pid: number): Promise<number> {
  return Number(/VmRSS:\s+(\d+)/.exec(await fs.readFile(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

async function peakWhile(pid: number, ms: number, during: () => Promise<void>): Promise<number> {
  let peak = 0;
  const end = Date.now() + ms;
  const work = during();
  while (Date.now() < end) {
    peak = Math.max(peak, await rss(pid));
    await sleep(200);
  }
  await work;
  return peak;
}

const dir = path.resolve(opts.warehouse);
const s = await startStart(dir);
const cookie = await signIn(s.url, s.token);
const streams = ((await (await fetch(`${s.url}/telemetry/streams?window=all`, { headers: { Authorization: `Bearer ${s.token}` } })).json()) as { streams: string[] }).streams;
const stream = encodeURIComponent(streams[0]!);
const pages: Record<string, string> = {
  'overview 24h': '/portal/',
  'overview live': '/portal/?window=live',
  'overview 30d': '/portal/?window=30d',
  'stream 24h': `/portal/streams/${stream}`,
  'stream 7d by region, filtered': `/portal/streams/${stream}?window=7d&by=region&filter=device%3Amobile`,
  ...(opts.withoutReports ? {} : { reports: '/portal/reports' }),
  origins: '/portal/origins',
};
say(`start on ${dir}: ${streams.length} streams of the tenant; pages of ${decodeURIComponent(stream)}`);

// Cold: the first request of each page after a swap (a posted report makes one within seconds).
const cold: Record<string, number[]> = {};
for (let i = 0; i < Number(opts.cold); i++) {
  const before = (await timed(`${s.url}/portal/`, cookie)).headers.get('content-length');
  await post(s, streams[0]!);
  const asOf = async () => /data-as-of="([^"]+)"/.exec((await fetch(`${s.url}/portal/?window=live`, { headers: { Cookie: cookie } }).then((r) => r.text())))?.[1];
  const was = await asOf();
  for (let w = 0; w < 300 && (await asOf()) === was; w++) await sleep(100);
  void before;
  for (const [name, p] of Object.entries(pages)) (cold[name] ??= []).push((await timed(`${s.url}${p}`, cookie)).ms);
}

// Warm, and the same bytes from a bare node:http server.
const canned: Record<string, { status: number; headers: Record<string, string>; body: string }> = {};
const warm: Record<string, { ms: number[]; bytes: number }> = {};
for (const [name, p] of Object.entries(pages)) {
  const first = await timed(`${s.url}${p}`, cookie);
  // fetch gave the bytes decoded: the bare server answers them gzip'd again, as the portal does.
  const gz = first.headers.get('content-encoding') === 'gzip';
  canned[p] = { status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8', ...(gz ? { 'Content-Encoding': 'gzip' } : {}) }, body: (gz ? gzipSync(first.body) : first.body).toString('base64') };
  const ms: number[] = [];
  for (let i = 0; i < Number(opts.rounds); i++) ms.push((await timed(`${s.url}${p}`, cookie)).ms);
  warm[name] = { ms, bytes: first.bytes };
}
const outDir = path.join(PROJECT_ROOT, 'bench', 'output');
await fs.mkdir(outDir, { recursive: true });
const cannedFile = path.join(outDir, 'portal-canned.json');
await fs.writeFile(cannedFile, JSON.stringify(canned));
const bare = await startChild(outDir, ['bin/run-ts.js', 'bench/bare-server.ts', cannedFile], /^(http:\S+)/m);
const bareMs: Record<string, number[]> = {};
for (const [name, p] of Object.entries(pages)) {
  bareMs[name] = [];
  for (let i = 0; i < Number(opts.rounds); i++) bareMs[name].push((await timed(`${bare.url}${p}`, cookie)).ms);
}
await stopChild(bare);

// Bytes: a first visit is the page and its two assets (gzip'd); a repeat visit the page alone.
const html = (await fetch(`${s.url}/portal/`, { headers: { Cookie: cookie } }).then((r) => r.text()));
const assets = [...html.matchAll(/\/portal\/assets\/[^"]+/g)].map((m) => m[0]);
const assetBytes = (await Promise.all(assets.map(async (a) => (await timed(`${s.url}${a}`, cookie)).bytes))).reduce((x, y) => x + y, 0);

// Live delay: a report acknowledged, then its session on a stream page open in Chromium, beside the API's freshness.
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const ctx = await browser.newContext();
await ctx.addCookies([{ name: 'p2ptel_portal', value: cookie.split('=')[1]!, url: s.url }]);
const page = await ctx.newPage();
await page.goto(`${s.url}/portal/streams/${stream}?window=live`);
const live: { page: number; api: number }[] = [];
for (let i = 0; i < Number(opts.probes); i++) {
  const shown = () => page.$eval('[data-figure="sessions"]', (e) => e.textContent ?? '');
  const before = await shown();
  const metrics = () => fetch(`${s.url}/telemetry/metrics/${stream}?window=1h`, { headers: { Authorization: `Bearer ${s.token}` } }).then((r) => r.json() as Promise<{ totalSessions: number }>);
  const sessionsBefore = (await metrics()).totalSessions;
  const acked = await post(s, streams[0]!);
  let api = 0;
  let shownAt = 0;
  while (performance.now() - acked < 60_000 && (!api || !shownAt)) {
    if (!api && (await metrics()).totalSessions > sessionsBefore) api = performance.now() - acked;
    if (!shownAt && (await shown()) !== before) shownAt = performance.now() - acked;
    await sleep(50);
  }
  live.push({ page: shownAt, api });
  await sleep(1000);
}
await browser.close();

// Memory: start's peak RSS over 30 s with no page open, then with N live pages, a report posted every 2 s in both.
const poster = async (ms: number) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await post(s, streams[0]!);
    await sleep(2000);
  }
};
const pid = s.child.pid!;
const idlePeak = await peakWhile(pid, 30_000, () => poster(30_000));
const controllers: AbortController[] = [];
const followers = Array.from({ length: Number(opts.pages) }, async (_, i) => {
  const c = new AbortController();
  controllers.push(c);
  const pagePath = i % 2 === 0 ? '/portal/?window=live' : `/portal/streams/${stream}?window=live`;
  const res = await fetch(`${s.url}/portal/events`, { headers: { Cookie: cookie }, signal: c.signal });
  const reader = res.body!.getReader();
  for (;;) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
    if (done) return;
    if (Buffer.from(value!).toString().includes('event: snapshot')) await fetch(`${s.url}${pagePath}`, { headers: { Cookie: cookie, 'X-Portal-Fragment': 'main' }, signal: c.signal }).then((r) => r.arrayBuffer()).catch(() => null);
  }
});
const livePeak = await peakWhile(pid, 30_000, () => poster(30_000));
for (const c of controllers) c.abort();
await Promise.allSettled(followers);
s.child.kill('SIGTERM');

const rows = Object.keys(pages).map((name) => ({
  page: name,
  coldP50: median(cold[name]!),
  coldP95: p95(cold[name]!),
  warmP50: median(warm[name]!.ms),
  warmP95: p95(warm[name]!.ms),
  bareP50: median(bareMs[name]!),
  ratio: median(warm[name]!.ms) / median(bareMs[name]!),
  bytes: warm[name]!.bytes,
}));
const result = {
  warehouse: dir,
  streams: streams.length,
  pages: rows,
  firstVisitBytes: warm['overview 24h']!.bytes + assetBytes,
  repeatVisitBytes: warm['overview 24h']!.bytes,
  assetBytes,
  live,
  rss: { idlePeakMb: idlePeak, livePagesPeakMb: livePeak, livePages: Number(opts.pages), addedMb: livePeak - idlePeak },
};
say('page                               cold p50/p95 ms   warm p50/p95 ms   bare p50 ms  warm/bare   bytes (gzip)');
for (const r of rows) say(`${r.page.padEnd(34)} ${r.coldP50.toFixed(1).padStart(6)} / ${r.coldP95.toFixed(1).padEnd(7)}  ${r.warmP50.toFixed(1).padStart(6)} / ${r.warmP95.toFixed(1).padEnd(7)}  ${r.bareP50.toFixed(2).padStart(8)}  ${r.ratio.toFixed(1).padStart(8)}x  ${r.bytes}`);
say(`first visit ${(result.firstVisitBytes / 1024).toFixed(1)} KB (assets ${(assetBytes / 1024).toFixed(1)} KB; goal ≤ 250), repeat visit ${(result.repeatVisitBytes / 1024).toFixed(1)} KB (goal ≤ 20)`);
say(`live: report acked → figure on an open page p50 ${(median(live.map((x) => x.page)) / 1000).toFixed(2)} s, max ${(Math.max(...live.map((x) => x.page)) / 1000).toFixed(2)} s; → the API's figure p50 ${(median(live.map((x) => x.api)) / 1000).toFixed(2)} s (goal: page ≤ API + 2 s)`);
say(`start's peak RSS: ${idlePeak.toFixed(0)} MB with no page, ${livePeak.toFixed(0)} MB with ${opts.pages} live pages (+${(livePeak - idlePeak).toFixed(0)} MB; goal ≤ 50)`);
say(`written ${await writeResult('portal', result)}`);
process.exit(0);
