// npm run bench:portal-memory -- --warehouse DIR [--pages 50] [--phases 3] [--seconds 30]
// What open live portal pages cost the API process in memory. Runs `p2ptel start` on a warehouse
// (30 days × 100 streams, as for bench:portal) with bench/memory-sampler.cjs preloaded, then
// alternates phases of --seconds: no page open, then --pages live pages (half the live overview,
// half a stream's live page, each fetching its <main> again on every `snapshot` event, as the
// portal's script does), a report posted every 2 s in both so that snapshots keep swapping. Prints,
// per phase: the peak and mean RSS (/proc VmRSS), the JS heap used, external memory and array
// buffers (the process's own process.memoryUsage()), the snapshots swapped and fragments fetched;
// and the process's VmHWM at the end.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Command } from 'commander';
import { PROJECT_ROOT } from '../lib/version.ts';
import { writeResult } from './report.ts';
import { signIn, startStart } from './portal-start.ts';

const opts = new Command()
  .requiredOption('--warehouse <dir>', 'warehouse with a published snapshot')
  .option('--pages <n>', 'live pages held open in a live phase', '50')
  .option('--phases <n>', 'pairs of phases (no page, then live pages)', '3')
  .option('--seconds <n>', 'length of each phase', '30')
  .parse()
  .opts<{ warehouse: string; pages: string; phases: string; seconds: string }>();
const say = (line: string) => process.stderr.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MB = 2 ** 20;

interface Sample {
  t: number;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

async function vm(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(await fs.readFile(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

const dir = path.resolve(opts.warehouse);
const outDir = path.join(PROJECT_ROOT, 'bench', 'output');
await fs.mkdir(outDir, { recursive: true });
const samplesFile = path.join(outDir, `portal-memory-samples-${Date.now()}.jsonl`);
const s = await startStart(dir, samplesFile);
const pid = s.child.pid!;
const cookie = await signIn(s.url, s.token);
const streams = ((await (await fetch(`${s.url}/telemetry/streams?window=all`, { headers: { Authorization: `Bearer ${s.token}` } })).json()) as { streams: string[] }).streams;
const stream = encodeURIComponent(streams[0]!);
let posted = 0;
async function post(): Promise<void> {
  const id = `bench-portal-memory-${process.pid}-${posted++}-${Date.now()}`;
  const report = { reportId: id, sessionId: id, streamId: streams[0]!, ts: new Date().toISOString(), intervalMs: 30000, seq: 0, final: true, cohort: 'p2p', contentType: 'live', bytesOffloaded: 3e6, bytesFallback: 1e6, peerCount: 3, bufferHealth: 12, watchMs: 30000, startupMs: 900 };
  await fetch(`${s.collector}/v1/session-reports`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Ingest-Key': s.key }, body: JSON.stringify({ reports: [report] }) });
}
const asOf = async () => /data-as-of="([^"]+)"/.exec(await fetch(`${s.url}/portal/?window=live`, { headers: { Cookie: cookie } }).then((r) => r.text()))?.[1];

/** One phase: --seconds with `pages` live pages, a report every 2 s; RSS read from /proc every 200 ms. */
async function phase(pages: number): Promise<{ pages: number; from: number; to: number; rssPeakMb: number; rssMeanMb: number; swaps: number; fragments: number }> {
  const from = Date.now();
  const end = from + Number(opts.seconds) * 1000;
  const controllers: AbortController[] = [];
  let fragments = 0;
  const followers = Array.from({ length: pages }, async (_, i) => {
    const c = new AbortController();
    controllers.push(c);
    const pagePath = i % 2 === 0 ? '/portal/?window=live' : `/portal/streams/${stream}?window=live`;
    const res = await fetch(`${s.url}/portal/events`, { headers: { Cookie: cookie }, signal: c.signal });
    const reader = res.body!.getReader();
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      if (Buffer.from(value!).toString().includes('event: snapshot')) {
        const ok = await fetch(`${s.url}${pagePath}`, { headers: { Cookie: cookie, 'X-Portal-Fragment': 'main' }, signal: c.signal }).then((r) => r.arrayBuffer().then(() => r.status === 200)).catch(() => false);
        if (ok) fragments++;
      }
    }
  });
  const firstAsOf = await asOf();
  const poster = (async () => {
    while (Date.now() < end) {
      await post();
      await sleep(2000);
    }
  })();
  const rss: number[] = [];
  while (Date.now() < end) {
    rss.push(await vm(pid, 'VmRSS'));
    await sleep(200);
  }
  await poster;
  const lastAsOf = await asOf();
  for (const c of controllers) c.abort();
  await Promise.allSettled(followers);
  // Snapshots swapped in the phase, roughly: the live hour's asOf moves once per swap.
  const swaps = firstAsOf && lastAsOf ? Math.round((Date.parse(lastAsOf) - Date.parse(firstAsOf)) / 1000) : 0;
  return { pages, from, to: Date.now(), rssPeakMb: Math.max(...rss), rssMeanMb: rss.reduce((a, b) => a + b, 0) / rss.length, swaps, fragments };
}

// Warm the pages once (their first render reads the API), then alternate.
for (const p of ['/portal/?window=live', `/portal/streams/${stream}?window=live`]) await fetch(`${s.url}${p}`, { headers: { Cookie: cookie } }).then((r) => r.arrayBuffer());
const phases = [];
for (let i = 0; i < Number(opts.phases); i++) {
  for (const pages of [0, Number(opts.pages)]) {
    const ph = phase(pages);
    const r = await ph;
    phases.push(r);
  }
}
const hwm = await vm(pid, 'VmHWM');
s.child.kill('SIGTERM');
const samples = (await fs.readFile(samplesFile, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Sample);
const rows = phases.map((p) => {
  const in_ = samples.filter((x) => x.t >= p.from && x.t <= p.to);
  const peak = (k: keyof Sample) => Math.max(...in_.map((x) => x[k])) / MB;
  const mean = (k: keyof Sample) => in_.reduce((a, x) => a + x[k], 0) / in_.length / MB;
  return { ...p, heapUsedPeakMb: peak('heapUsed'), heapUsedMeanMb: mean('heapUsed'), heapTotalPeakMb: peak('heapTotal'), externalPeakMb: peak('external'), arrayBuffersPeakMb: peak('arrayBuffers'), nativeMeanMb: mean('rss') - mean('heapTotal') - mean('external') };
});
say('phase  pages  swaps  fragments  RSS peak/mean MB  heapUsed peak/mean  heapTotal peak  external peak  arrayBuffers peak  rss-heap-external mean');
rows.forEach((r, i) => say(`${String(i).padStart(5)}  ${String(r.pages).padStart(5)}  ${String(r.swaps).padStart(5)}  ${String(r.fragments).padStart(9)}  ${r.rssPeakMb.toFixed(0).padStart(7)} / ${r.rssMeanMb.toFixed(0).padEnd(6)}  ${r.heapUsedPeakMb.toFixed(0).padStart(8)} / ${r.heapUsedMeanMb.toFixed(0).padEnd(6)}  ${r.heapTotalPeakMb.toFixed(0).padStart(14)}  ${r.externalPeakMb.toFixed(0).padStart(13)}  ${r.arrayBuffersPeakMb.toFixed(0).padStart(17)}  ${r.nativeMeanMb.toFixed(0).padStart(10)}`));
const live = rows.filter((r) => r.pages > 0);
const idle = rows.filter((r) => r.pages === 0);
const added = live.map((r, i) => r.rssPeakMb - idle[i]!.rssPeakMb);
say(`added by ${opts.pages} live pages (peak RSS, live phase − the no-page phase before it): ${added.map((a) => `${a >= 0 ? '+' : ''}${a.toFixed(0)}`).join(', ')} MB; VmHWM ${hwm.toFixed(0)} MB (goal: ≤ +50 MB)`);
say(`written ${await writeResult('portal-memory', { warehouse: dir, pages: Number(opts.pages), seconds: Number(opts.seconds), phases: rows, addedMb: added, vmHwmMb: hwm, samplesFile })}`);
process.exit(0);
