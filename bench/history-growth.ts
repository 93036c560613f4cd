// npm run bench:history -- [--dir DIR] [--days 30] [--fraction 10]
// How a rollup run's time and memory change when history grows: the landed files of the last
// `days / fraction` days of DIR (bench:incremental's 30-day set by default, generated there first
// when missing) are hard-linked into a second warehouse, and each warehouse gets, in a child
// process of its own (`cli pipeline`), a from-scratch run, a run after one more hour of files, and
// a rerun with nothing new (the next 5-minute tick). Peak RSS is read from /proc/<pid>/status of
// the child while it runs. Prints each figure for both histories and the ratio.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { PROJECT_ROOT } from '../lib/version.ts';
import { writeResult } from './report.ts';

const opts = new Command()
  .option('--dir <dir>', 'warehouse with the long history (generated when empty)', path.join(PROJECT_ROOT, 'bench', 'output', 'incremental'))
  .option('--days <n>', 'days of the long history', '30')
  .option('--fraction <n>', 'the short history is this many times shorter', '10')
  .parse()
  .opts<{ dir: string; days: string; fraction: string }>();

const HOUR = 3_600_000;
const days = Number(opts.days);
const fraction = Number(opts.fraction);
const start = new Date('2026-10-01T00:00:00Z');
const end = new Date(start.getTime() + days * 24 * HOUR);
const long = path.resolve(opts.dir);
const short = `${long}-last-${Math.max(1, Math.round(days / fraction))}d`;
const cli = path.join(PROJECT_ROOT, 'bin/p2ptel.js');
const run = promisify(execFile);
const customers = Array.from({ length: 10 }, (_, i) => `c${i + 1}`);

async function landed(dir: string): Promise<string[]> {
  const root = path.join(dir, 'raw', 'session_reports');
  const out: string[] = [];
  for (const e of await fs.readdir(root, { recursive: true, withFileTypes: true }).catch(() => [])) {
    if (e.isFile() && e.name.endsWith('.parquet')) out.push(path.relative(root, path.join(e.parentPath, e.name)));
  }
  return out;
}

async function generate(dir: string, args: string[]): Promise<void> {
  await run(process.execPath, [cli, 'generate', '--warehouse', dir, ...args], { maxBuffer: 64 * 1024 * 1024 });
}

/** One `cli pipeline` in a child process: seconds and peak RSS (MB, polled from /proc). */
async function pipeline(dir: string, args: string[]): Promise<{ seconds: number; peakMb: number }> {
  const t = performance.now();
  const child = spawn(process.execPath, [cli, 'pipeline', '--warehouse', dir, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  let peakKb = 0;
  const poll = setInterval(() => {
    fs.readFile(`/proc/${child.pid}/status`, 'utf8')
      .then((text) => {
        peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(text)?.[1] ?? 0));
      })
      .catch(() => {});
  }, 20);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearInterval(poll);
  if (code !== 0) throw new Error(`pipeline ${args.join(' ')} on ${dir} exited ${code}`);
  return { seconds: (performance.now() - t) / 1000, peakMb: peakKb / 1024 };
}

if ((await landed(long)).length === 0) {
  process.stderr.write(`generating ${days} days × 100 streams into ${long} ...\n`);
  await generate(long, ['--customers', customers.join(','), '--streams', '10', '--sessions', '1350', '--start', start.toISOString(), '--hours', String(days * 24), '--seed', '7']);
}
// The short history: the last days of the long one (same streams, same density), hard links.
const cutoff = new Date(end.getTime() - (days / fraction) * 24 * HOUR).toISOString().slice(0, 10);
await fs.rm(short, { recursive: true, force: true });
for (const rel of await landed(long)) {
  const date = /date=(\d{4}-\d{2}-\d{2})/.exec(rel)?.[1];
  if (!date || date < cutoff || /gen-(8|9)-/.test(path.basename(rel))) continue;
  const to = path.join(short, 'raw', 'session_reports', rel);
  await fs.mkdir(path.dirname(to), { recursive: true });
  await fs.link(path.join(long, 'raw', 'session_reports', rel), to);
}

const asOf = (ms: number) => ['--as-of', new Date(ms).toISOString(), '--replace-current'];
const results: Record<string, Record<string, { seconds: number; peakMb: number }>> = {};
for (const [name, dir] of [['short', short], ['long', long]] as const) {
  for (const rel of await landed(dir)) if (/gen-(8|9)-/.test(path.basename(rel))) await fs.rm(path.join(dir, 'raw', 'session_reports', rel));
  for (const p of ['state', 'snapshots', 'reports', 'catalog.duckdb']) await fs.rm(path.join(dir, p), { recursive: true, force: true });
  const r: Record<string, { seconds: number; peakMb: number }> = {};
  r.fromScratch = await pipeline(dir, asOf(end.getTime()));
  await generate(dir, ['--customers', customers.join(','), '--streams', '10', '--sessions', '2', '--start', end.toISOString(), '--hours', '1', '--seed', '8']);
  r.afterNewHour = await pipeline(dir, asOf(end.getTime() + HOUR));
  r.rerun = await pipeline(dir, asOf(end.getTime() + HOUR + 5 * 60_000));
  results[name] = r;
  process.stderr.write(`${name} history done\n`);
}

const lines = [`history growth: the last ${days / fraction} days against ${days} days of the same 100 streams (${fraction}× the history)`];
for (const k of ['fromScratch', 'afterNewHour', 'rerun']) {
  const a = results.short![k]!;
  const b = results.long![k]!;
  lines.push(
    `  ${k.padEnd(13)} time ${a.seconds.toFixed(2)} s → ${b.seconds.toFixed(2)} s (${(b.seconds / a.seconds).toFixed(2)}×)   ` +
      `peak RSS ${a.peakMb.toFixed(0)} MB → ${b.peakMb.toFixed(0)} MB (${(b.peakMb / a.peakMb).toFixed(2)}×)`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
await writeResult('history-growth', { days, fraction, results });
