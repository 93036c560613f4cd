// npm run bench:history -- [--dir DIR] [--days 30] [--fraction 10] [--sessions-scale 1,3,10] [--today-hours 20] [--today-sessions 50] [--rounds 3] [--prepare-only] [--against-root ROOT]
// How a rollup tick's time and memory change when history grows. Two ways of growing it:
// - longer (the default): the landed files of the last `days / fraction` days of DIR
//   (bench:incremental's 30-day set by default, generated there first when missing) are
//   hard-linked into a second warehouse;
// - denser (`--sessions-scale 1,3,10`): one warehouse per factor, `days` days of the same 100
//   streams with the factor times the sessions (1,350 per stream at 1×), in DIR-x<factor>.
// Each warehouse gets a from-scratch run (once: kept between invocations in the denser mode,
// `--prepare-only` stops there), then `--rounds` rounds in which each warehouse in turn (sizes
// interleaved, so that the machine's load moves them alike) gets three ticks: a run after one more
// hour of files (the first of an hour), a rerun with nothing new 5 minutes later, and a run after
// a file of new reports in that hour 5 minutes after that. Each run is a `cli pipeline` process
// of its own, its start included; peak RSS is read from /proc/<pid>/status of the child while it
// runs. Prints each figure's median for every size and its ratio to the first size.
// With `--today-hours H` (denser mode), each warehouse also gets a heavy today before its ticks:
// `--today-sessions` sessions per stream in each of the H hours after the history's end, landed an
// hour at a time with a run (and its inline compaction, which merges the day's layers) after each,
// as a day of live traffic leaves it; the ticks then go on from hour H (in DIR-x<factor>-today<H>).
// With `--against-root ROOT` (another checkout, built: e.g. a worktree of main), the denser mode
// runs each tick with both builds, A/B: each size gets a copy of its warehouse for the other build
// (DIR-x<factor>-against, copied once from the built one), and in every round each size's ticks run
// with this build and the other in turn (which goes first alternates by round); the same files
// land in both copies, so both builds tick over the same data.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { PROJECT_ROOT } from '../lib/version.ts';
import { median, writeResult } from './report.ts';

const opts = new Command()
  .option('--dir <dir>', 'warehouse with the long history (generated when empty)', path.join(PROJECT_ROOT, 'bench', 'output', 'incremental'))
  .option('--days <n>', 'days of the long history', '30')
  .option('--fraction <n>', 'the short history is this many times shorter', '10')
  .option('--sessions-scale <list>', 'instead: warehouses of these multiples of the sessions, same days and streams (e.g. 1,3,10)')
  .option('--today-hours <n>', 'with --sessions-scale: a heavy today of this many hours before the ticks', '0')
  .option('--today-sessions <n>', "with --today-hours: sessions per stream in each of today's hours", '50')
  .option('--rounds <n>', 'rounds of ticks, the sizes interleaved in each', '3')
  .option('--prepare-only', 'generate and build the warehouses, time nothing else')
  .option('--against-root <dir>', 'with --sessions-scale: A/B against the build of this checkout (its bin/p2ptel.js)')
  .parse()
  .opts<{ dir: string; days: string; fraction: string; sessionsScale?: string; todayHours: string; todaySessions: string; rounds: string; prepareOnly?: boolean; againstRoot?: string }>();

const HOUR = 3_600_000;
const MINUTE = 60_000;
const days = Number(opts.days);
const todayHours = Number(opts.todayHours);
if (!Number.isInteger(todayHours) || todayHours < 0 || todayHours > 22) throw new Error(`--today-hours: a whole number of hours from 0 to 22, not ${opts.todayHours}`);
if (todayHours > 0 && !opts.sessionsScale) throw new Error('--today-hours needs --sessions-scale');
const todaySessions = Number(opts.todaySessions);
if (!Number.isInteger(todaySessions) || todaySessions < 1) throw new Error(`--today-sessions: a whole number of sessions per stream from 1, not ${opts.todaySessions}`);
/** Seeds of today's heavy hours (1000 + hour): not tick seeds, kept when a warehouse is built again. */
const TODAY_SEED = 1000;
const fraction = Number(opts.fraction);
const start = new Date('2026-10-01T00:00:00Z');
const end = new Date(start.getTime() + days * 24 * HOUR);
const base = path.resolve(opts.dir);
const cli = path.join(PROJECT_ROOT, 'bin/p2ptel.js');
const run = promisify(execFile);
const customers = Array.from({ length: 10 }, (_, i) => `c${i + 1}`);
const SESSIONS_PER_STREAM = 1350;
/** Seeds of the files the ticks land (the history's is 7): removed when a warehouse is built again. */
const TICK_SEEDS = /gen-(8|9|\d{3})-/;

interface Run {
  seconds: number;
  peakMb: number;
  /** CPU seconds (user + system) of the child, as last polled (at most 20 ms before its exit). */
  cpuSeconds: number;
}

async function landed(dir: string): Promise<string[]> {
  const root = path.join(dir, 'raw', 'session_reports');
  const out: string[] = [];
  for (const e of await fs.readdir(root, { recursive: true, withFileTypes: true }).catch(() => [])) {
    if (e.isFile() && e.name.endsWith('.parquet')) out.push(path.relative(root, path.join(e.parentPath, e.name)));
  }
  return out;
}

async function generate(dir: string, args: string[]): Promise<void> {
  await run(process.execPath, [cli, 'generate', '--warehouse', dir, '--customers', customers.join(','), '--streams', '10', ...args], { maxBuffer: 64 * 1024 * 1024 });
}

/** One `cli pipeline` in a child process: seconds and peak RSS (MB, polled from /proc). */
async function pipeline(dir: string, args: string[], bin = cli): Promise<Run> {
  const t = performance.now();
  const child = spawn(process.execPath, [bin, 'pipeline', '--warehouse', dir, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  let peakKb = 0;
  let ticks = 0;
  const poll = setInterval(() => {
    fs.readFile(`/proc/${child.pid}/status`, 'utf8')
      .then((text) => {
        peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(text)?.[1] ?? 0));
      })
      .catch(() => {});
    fs.readFile(`/proc/${child.pid}/stat`, 'utf8')
      .then((text) => {
        // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
        const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
        ticks = Math.max(ticks, Number(f[11]) + Number(f[12]));
      })
      .catch(() => {});
  }, 20);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  clearInterval(poll);
  if (code !== 0) throw new Error(`pipeline ${args.join(' ')} on ${dir} exited ${code}`);
  return { seconds: (performance.now() - t) / 1000, peakMb: peakKb / 1024, cpuSeconds: ticks / 100 };
}

const asOf = (ms: number) => ['--as-of', new Date(ms).toISOString(), '--replace-current'];

/** The warehouses to compare, smallest first, each with its name. */
async function warehouses(): Promise<{ name: string; dir: string; fresh: boolean }[]> {
  if (opts.sessionsScale) {
    const out = [];
    for (const k of opts.sessionsScale.split(',').map(Number)) {
      const dir = `${base}-x${k}${todayHours > 0 ? `-today${todayHours}x${todaySessions}` : ''}`;
      if ((await landed(dir)).length === 0) {
        process.stderr.write(`generating ${days} days × 100 streams × ${k * SESSIONS_PER_STREAM} sessions into ${dir} ...\n`);
        await generate(dir, ['--sessions', String(k * SESSIONS_PER_STREAM), '--start', start.toISOString(), '--hours', String(days * 24), '--seed', '7']);
      }
      const fresh = !(await fs.stat(path.join(dir, 'state')).catch(() => null));
      out.push({ name: `${k}× sessions`, dir, fresh });
    }
    return out;
  }
  if ((await landed(base)).length === 0) {
    process.stderr.write(`generating ${days} days × 100 streams into ${base} ...\n`);
    await generate(base, ['--sessions', String(SESSIONS_PER_STREAM), '--start', start.toISOString(), '--hours', String(days * 24), '--seed', '7']);
  }
  // The short history: the last days of the long one (same streams, same density), hard links.
  const short = `${base}-last-${Math.max(1, Math.round(days / fraction))}d`;
  const cutoff = new Date(end.getTime() - (days / fraction) * 24 * HOUR).toISOString().slice(0, 10);
  await fs.rm(short, { recursive: true, force: true });
  for (const rel of await landed(base)) {
    const date = /date=(\d{4}-\d{2}-\d{2})/.exec(rel)?.[1];
    if (!date || date < cutoff || TICK_SEEDS.test(path.basename(rel))) continue;
    const to = path.join(short, 'raw', 'session_reports', rel);
    await fs.mkdir(path.dirname(to), { recursive: true });
    await fs.link(path.join(base, 'raw', 'session_reports', rel), to);
  }
  return [
    { name: 'short', dir: short, fresh: true },
    { name: 'long', dir: base, fresh: true },
  ];
}

/** The warehouse as its history alone leaves it, and a from-scratch run over it (then its heavy today, if any). */
async function fromScratch(dir: string): Promise<Run> {
  const todaySeed = (rel: string) => Number(/gen-(\d+)-/.exec(path.basename(rel))?.[1]) >= TODAY_SEED;
  for (const rel of await landed(dir)) if (TICK_SEEDS.test(path.basename(rel)) || todaySeed(rel)) await fs.rm(path.join(dir, 'raw', 'session_reports', rel));
  for (const p of ['state', 'snapshots', 'reports', 'catalog.duckdb', 'compaction']) await fs.rm(path.join(dir, p), { recursive: true, force: true });
  const run = await pipeline(dir, asOf(end.getTime()));
  for (let h = 0; h < todayHours; h++) {
    const hour = end.getTime() + h * HOUR;
    await generate(dir, ['--sessions', String(todaySessions), '--start', new Date(hour).toISOString(), '--hours', '1', '--seed', String(TODAY_SEED + h)]);
    await pipeline(dir, asOf(hour + HOUR + MINUTE));
    process.stderr.write(`${dir}: today's hour ${h + 1} of ${todayHours} landed\n`);
  }
  return run;
}

/**
 * Round `r`'s three ticks: hour r + 1 after the history's end gets its files (seed 100 + r: a
 * few sessions per stream over the hour), and the run a minute into the next hour; a rerun 5
 * minutes later; then new reports into that hour (seed 500 + r) and the run 5 minutes after.
 */
async function ticks(dir: string, r: number, bin = cli): Promise<Record<string, Run>> {
  const hour = end.getTime() + r * HOUR;
  const out: Record<string, Run> = {};
  await generate(dir, ['--sessions', '2', '--start', new Date(hour).toISOString(), '--hours', '1', '--seed', String(100 + r)]);
  out.newHour = await pipeline(dir, asOf(hour + HOUR + MINUTE), bin);
  out.rerun = await pipeline(dir, asOf(hour + HOUR + 6 * MINUTE), bin);
  await generate(dir, ['--sessions', '1', '--start', new Date(hour + HOUR).toISOString(), '--hours', '0.15', '--seed', String(500 + r)]);
  out.newReports = await pipeline(dir, asOf(hour + HOUR + 11 * MINUTE), bin);
  return out;
}

const againstCli = opts.againstRoot ? path.join(path.resolve(opts.againstRoot), 'bin/p2ptel.js') : undefined;
if (againstCli && !opts.sessionsScale) throw new Error('--against-root needs --sessions-scale');
/** The other build's copy of a warehouse (made from the built one when missing). */
async function againstCopy(dir: string): Promise<string> {
  const copy = `${dir}-against`;
  if (!(await fs.stat(copy).catch(() => null))) await run('cp', ['-a', dir, copy]);
  return copy;
}

const list = await warehouses();
const results: Record<string, { fromScratch?: Run; ticks: Record<string, Run>[]; against?: Record<string, Run>[] }> = {};
for (const w of list) {
  results[w.name] = { ticks: [] };
  if (w.fresh || !opts.sessionsScale) {
    results[w.name]!.fromScratch = await fromScratch(w.dir);
    process.stderr.write(`${w.name}: from scratch ${results[w.name]!.fromScratch!.seconds.toFixed(2)} s\n`);
  }
}
if (opts.prepareOnly) process.exit(0);
// Ticks continue after the hours earlier invocations landed (the denser mode keeps its warehouses).
const firstRound = async (dir: string) => {
  let n = 0;
  for (const rel of await landed(dir)) {
    const m = /gen-(\d{3})-/.exec(path.basename(rel));
    if (m && Number(m[1]) >= 100 && Number(m[1]) < 500) n = Math.max(n, Number(m[1]) - 100 + 1);
  }
  return n;
};
const offsets = await Promise.all(list.map((w) => firstRound(w.dir)));
const first = Math.max(todayHours, ...offsets);
// Ticks past the heavy day's end would make it yesterday's (settled whole, as every day before asOf's).
if (todayHours > 0 && first + Number(opts.rounds) > 24) {
  throw new Error(`--today-hours: the warehouses have ticked to hour ${first} of their heavy today, and ${opts.rounds} more rounds would leave it: remove ${base}-x*-today* to build them again`);
}
if (againstCli) {
  for (const w of list) {
    const copy = await againstCopy(w.dir);
    if ((await firstRound(copy)) !== (await firstRound(w.dir))) throw new Error(`${w.dir} and ${copy} have ticked apart: build them again`);
  }
}
for (let r = 0; r < Number(opts.rounds); r++) {
  for (const w of list) {
    const res = results[w.name]!;
    if (!againstCli) {
      res.ticks.push(await ticks(w.dir, first + r));
    } else {
      const copy = `${w.dir}-against`;
      res.against ??= [];
      if (r % 2 === 0) {
        res.ticks.push(await ticks(w.dir, first + r));
        res.against.push(await ticks(copy, first + r, againstCli));
      } else {
        res.against.push(await ticks(copy, first + r, againstCli));
        res.ticks.push(await ticks(w.dir, first + r));
      }
    }
    process.stderr.write(`round ${r + 1}: ${w.name} done\n`);
  }
}

const lines = [
  opts.sessionsScale
    ? `history growth: ${days} days of the same 100 streams, ${opts.sessionsScale}× the sessions${todayHours > 0 ? `, and a today of ${todayHours} hours × ${todaySessions} sessions a stream` : ''} (medians of ${opts.rounds} rounds, sizes interleaved)`
    : `history growth: the last ${days / fraction} days against ${days} days of the same 100 streams (${fraction}× the history; medians of ${opts.rounds} rounds, interleaved)`,
];
const ref = results[list[0]!.name]!;
const med = (rs: Record<string, Run>[], k: string, f: keyof Run) => median(rs.map((x) => x[k]![f]));
for (const k of ['fromScratch', 'newHour', 'rerun', 'newReports']) {
  const cells = list.map((w) => {
    const res = results[w.name]!;
    const one = (f: keyof Run) => (k === 'fromScratch' ? res.fromScratch?.[f] : res.ticks.length ? med(res.ticks, k, f) : undefined);
    const refOne = (f: keyof Run) => (k === 'fromScratch' ? ref.fromScratch?.[f] : ref.ticks.length ? med(ref.ticks, k, f) : undefined);
    const s = one('seconds');
    const m = one('peakMb');
    const c = one('cpuSeconds');
    if (s === undefined || m === undefined) return `${w.name}: -`;
    const rs = refOne('seconds');
    const rm = refOne('peakMb');
    const rc = refOne('cpuSeconds');
    const cpu = c !== undefined ? `, CPU ${c.toFixed(2)} s${rc ? ` (${(c / rc).toFixed(2)}×)` : ''}` : '';
    return `${w.name}: ${s.toFixed(2)} s${rs ? ` (${(s / rs).toFixed(2)}×)` : ''}${cpu}, ${m.toFixed(0)} MB${rm ? ` (${(m / rm).toFixed(2)}×)` : ''}`;
  });
  lines.push(`  ${k.padEnd(11)} ${cells.join('   ')}`);
}
if (againstCli) {
  lines.push(`A/B: this build against ${opts.againstRoot} (the same ticks on a copy of each warehouse; medians; this / against)`);
  for (const k of ['newHour', 'rerun', 'newReports']) {
    const cells = list.map((w) => {
      const res = results[w.name]!;
      const a = res.against ?? [];
      const [s, sa, m, ma] = [med(res.ticks, k, 'seconds'), med(a, k, 'seconds'), med(res.ticks, k, 'peakMb'), med(a, k, 'peakMb')];
      const [c, ca] = [med(res.ticks, k, 'cpuSeconds'), med(a, k, 'cpuSeconds')];
      return `${w.name}: ${s.toFixed(2)} / ${sa.toFixed(2)} s (${(s / sa).toFixed(2)}×), CPU ${c.toFixed(2)} / ${ca.toFixed(2)} s (${(c / ca).toFixed(2)}×), ${m.toFixed(0)} / ${ma.toFixed(0)} MB (${(m / ma).toFixed(2)}×)`;
    });
    lines.push(`  ${k.padEnd(11)} ${cells.join('   ')}`);
  }
  const refA = ref.against ?? [];
  lines.push(`the other build alone, ratio to the first size:`);
  for (const k of ['newHour', 'rerun', 'newReports']) {
    const cells = list.map((w) => {
      const a = results[w.name]!.against ?? [];
      const [s, m, c] = [med(a, k, 'seconds'), med(a, k, 'peakMb'), med(a, k, 'cpuSeconds')];
      return `${w.name}: ${s.toFixed(2)} s (${(s / med(refA, k, 'seconds')).toFixed(2)}×), CPU ${c.toFixed(2)} s (${(c / med(refA, k, 'cpuSeconds')).toFixed(2)}×), ${m.toFixed(0)} MB (${(m / med(refA, k, 'peakMb')).toFixed(2)}×)`;
    });
    lines.push(`  ${k.padEnd(11)} ${cells.join('   ')}`);
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
await writeResult('history-growth', { days, fraction, sessionsScale: opts.sessionsScale ?? null, todayHours, todaySessions, results });
