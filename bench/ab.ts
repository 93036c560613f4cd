// A/B runs of the benchmarks (`--against <commit>`): this checkout's build and another commit's,
// built in a temporary git worktree, each run as a `p2ptel` child process on its own hard-linked
// copy of the same landed files, alternately (A B A B ...), timed from outside with the child's
// peak RSS (VmHWM of /proc/<pid>/status, read by the child itself as it exits: ab-peak-rss.cjs)
// and CPU seconds: on a shared machine wall times swing with the load (2-4× within minutes), so
// each round's ratio is taken pair by pair and the CPU seconds are printed beside the times.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../lib/version.ts';
import type { Db, DbSession } from '../warehouse/duckdb/index.ts';
import { PIECE_COLUMNS } from '../warehouse/figures/index.ts';
import { SESSION_DIMENSIONS } from '../warehouse/session-reports/index.ts';
import { warehouseLayout } from '../warehouse/layout.ts';
import { currentSnapshot } from '../warehouse/snapshots/index.ts';
import { quotedString } from '../warehouse/duckdb/index.ts';
import { median } from './report.ts';

const exec = promisify(execFile);
const PEAK_PRELOAD = path.join(PROJECT_ROOT, 'bench', 'ab-peak-rss.cjs');

/** A build to run: the project root holding it and the commit it is (this checkout: HEAD, maybe with edits). */
export interface Build {
  label: string;
  root: string;
  commit: string;
  /** Removes its worktree (a no-op for this checkout). */
  dispose: () => Promise<void>;
}

/** One child run: its wall seconds, CPU seconds, peak RSS and output. */
export interface ChildRun {
  seconds: number;
  cpuSeconds: number;
  peakRssMb: number;
  stdout: string;
}

async function git(args: string[], cwd = PROJECT_ROOT): Promise<string> {
  return (await exec('git', args, { cwd, maxBuffer: 16 * 1024 * 1024 })).stdout.trim();
}

/** This checkout, built if stale. */
export async function thisBuild(): Promise<Build> {
  await exec(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'build.js'), '--if-stale'], { cwd: PROJECT_ROOT });
  const dirty = (await git(['status', '--porcelain', '--untracked-files=no'])) !== '';
  const commit = (await git(['rev-parse', '--short=7', 'HEAD'])) + (dirty ? '+edits' : '');
  return { label: 'this', root: PROJECT_ROOT, commit, dispose: async () => {} };
}

/** `ref` checked out in a temporary worktree (node_modules linked to this checkout's) and built. */
export async function buildAgainst(ref: string): Promise<Build> {
  const sha = await git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const root = path.join(await fs.realpath((await exec('mktemp', ['-d', '-t', 'p2ptel-ab-XXXXXX'])).stdout.trim()), 'tree');
  const dispose = async () => {
    await git(['worktree', 'remove', '--force', root]).catch(() => undefined);
    await fs.rm(path.dirname(root), { recursive: true, force: true });
  };
  try {
    await git(['worktree', 'add', '--detach', root, sha]);
    await fs.symlink(await fs.realpath(path.join(PROJECT_ROOT, 'node_modules')), path.join(root, 'node_modules'));
    // Commits before bin/build.js ran their sources through tsx (bin/p2ptel.js): ~0.2 s more to start.
    const builder = path.join(root, 'bin', 'build.js');
    if (await fs.stat(builder).then(() => true, () => false)) await exec(process.execPath, [builder], { cwd: root });
  } catch (err) {
    await dispose();
    throw err;
  }
  return { label: 'against', root, commit: sha.slice(0, 7), dispose };
}

/** Whether `build`'s `p2ptel <command>` takes `flag` (an older commit may lack it). */
export async function takesFlag(build: Build, command: string, flag: string): Promise<boolean> {
  const { stdout } = await exec(process.execPath, [path.join(build.root, 'bin', 'p2ptel.js'), command, '--help'], { env: childEnv() });
  return stdout.includes(flag);
}

/** The environment of a child: the compiled build, never the sources through tsx (bin/run-ts.js sets that). */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env['P2PTEL_FROM_SOURCE'];
  delete env['P2PTEL_BUILD'];
  return env;
}

/** `p2ptel ...args` of `build`, timed, with its peak RSS; throws when it fails. */
export async function runChild(build: Build, args: string[], env: Record<string, string> = {}): Promise<ChildRun> {
  const peakFile = path.join(await fs.realpath((await exec('mktemp', ['-d', '-t', 'p2ptel-peak-XXXXXX'])).stdout.trim()), 'peak');
  const t = performance.now();
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', PEAK_PRELOAD, path.join(build.root, 'bin', 'p2ptel.js'), ...args], {
      env: childEnv({ ...env, P2PTEL_AB_PEAK_FILE: peakFile }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (c) => resolve({ code: c, stdout: out, stderr: err }));
  });
  const seconds = (performance.now() - t) / 1000;
  if (code !== 0) throw new Error(`${build.label} (${build.commit}) p2ptel ${args.join(' ')} exited ${code}:\n${stderr.slice(-4000)}`);
  const usage = JSON.parse(await fs.readFile(peakFile, 'utf8').catch(() => '{}')) as { vmHwmKb?: number; cpuSeconds?: number };
  await fs.rm(path.dirname(peakFile), { recursive: true, force: true });
  return { seconds, cpuSeconds: usage.cpuSeconds ?? NaN, peakRssMb: (usage.vmHwmKb ?? NaN) / 1024, stdout };
}

/** A fresh copy of `source` (its files hard-linked: nothing copied) at `dest`; what was at `dest` goes. */
export async function linkCopy(source: string, dest: string): Promise<void> {
  await fs.rm(dest, { recursive: true, force: true });
  await fs.mkdir(path.dirname(dest), { recursive: true });
  await exec('cp', ['-al', source, dest]);
}

/** Medians of a step's runs for one build. */
export interface StepSummary {
  seconds: number[];
  cpuSeconds: number[];
  peakRssMb: number[];
  medianSeconds: number;
  medianCpuSeconds: number;
  medianPeakRssMb: number;
}

export function summarize(runs: readonly ChildRun[]): StepSummary {
  const seconds = runs.map((r) => r.seconds);
  const cpuSeconds = runs.map((r) => r.cpuSeconds);
  const peakRssMb = runs.map((r) => r.peakRssMb);
  return { seconds, cpuSeconds, peakRssMb, medianSeconds: median(seconds), medianCpuSeconds: median(cpuSeconds), medianPeakRssMb: median(peakRssMb) };
}

/** Ratios this / against: of the medians, and the median of each round's own ratio (the runs of a round are next to each other). */
export function abRatios(a: StepSummary, b: StepSummary) {
  const paired = (xs: number[], ys: number[]) => median(xs.map((x, i) => x / ys[i]!));
  return {
    seconds: a.medianSeconds / b.medianSeconds,
    secondsPaired: paired(a.seconds, b.seconds),
    cpuSeconds: a.medianCpuSeconds / b.medianCpuSeconds,
    cpuSecondsPaired: paired(a.cpuSeconds, b.cpuSeconds),
    peakRss: a.medianPeakRssMb / b.medianPeakRssMb,
  };
}

/** A step's lines: both builds' medians and their ratios (this / against). */
export function abLine(step: string, a: StepSummary, b: StepSummary): string {
  const side = (x: StepSummary) => `${x.medianSeconds.toFixed(2).padStart(7)} s wall ${x.medianCpuSeconds.toFixed(2).padStart(7)} s CPU ${x.medianPeakRssMb.toFixed(0).padStart(5)} MiB`;
  const r = abRatios(a, b);
  return [
    `  ${step}`,
    `    this    ${side(a)}`,
    `    against ${side(b)}`,
    `    this / against: wall ${r.seconds.toFixed(2)}× (per round ${r.secondsPaired.toFixed(2)}×), CPU ${r.cpuSeconds.toFixed(2)}× (per round ${r.cpuSecondsPaired.toFixed(2)}×), peak RSS ${r.peakRss.toFixed(2)}×`,
  ].join('\n');
}

/** The builds' worktrees removed on an interrupt too (then the process exits 130). */
export function disposeOnSignal(builds: readonly Build[]): void {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => void Promise.all(builds.map((b) => b.dispose())).finally(() => process.exit(130)));
  }
}

/** Rows that differ between the current snapshots of two warehouses, file by file (the Parquet files of the same path in both). */
export async function compareSnapshots(db: Db, dirA: string, dirB: string): Promise<{ files: number; differing: number; incomparable: string[] }> {
  const [a, b] = await Promise.all([currentSnapshot(warehouseLayout(dirA)), currentSnapshot(warehouseLayout(dirB))]);
  if (!a || !b) throw new Error('a side published no snapshot');
  const inA = await parquetFiles(a.dir);
  const inB = new Set(await parquetFiles(b.dir));
  // A customer's session classes are split over part files as its class units are (which builds
  // may cut differently, and a session's part of one class may be split over rows): compared as
  // the rows of all its parts added up per session and class, not file by file.
  const classes = (f: string) => /^session_classes\/customer=[^/]+\//.exec(f)?.[0] ?? null;
  const both = inA.filter((f) => inB.has(f) && classes(f) === null);
  const classFolders = [...new Set([...inA, ...inB].map(classes).filter((c): c is string => c !== null))];
  let differing = 0;
  const incomparable: string[] = [];
  const count = async (s: DbSession, x: string, y: string, label: string) => {
    try {
      const r = await s.one<{ n: number }>(
        `SELECT (SELECT count(*) FROM (SELECT * FROM ${x} EXCEPT ALL SELECT * FROM ${y})) + (SELECT count(*) FROM (SELECT * FROM ${y} EXCEPT ALL SELECT * FROM ${x})) AS n`,
      );
      differing += Number(r.n);
    } catch {
      incomparable.push(label); // other columns in the other build's files
    }
  };
  await db.withSession(async (s) => {
    for (const f of both) {
      await count(s, `read_parquet(${quotedString(path.join(a.dir, f))}, hive_partitioning = false)`, `read_parquet(${quotedString(path.join(b.dir, f))}, hive_partitioning = false)`, f);
    }
    for (const folder of classFolders) await count(s, `(${classesAddedUp(path.join(a.dir, folder))})`, `(${classesAddedUp(path.join(b.dir, folder))})`, folder);
  });
  const only = [...inA.filter((f) => !inB.has(f)), ...[...inB].filter((f) => !inA.includes(f))].filter((f) => classes(f) === null);
  return { files: both.length + classFolders.length, differing, incomparable: [...incomparable, ...only] };
}

/**
 * A customer's session classes (every part file of `folder`) added up per (stream, session,
 * class): each piece column combined as piece-columns.ts combines it, the dimensions those of the
 * earliest report.
 */
function classesAddedUp(folder: string): string {
  const columns = PIECE_COLUMNS.map((c) => `${c.combine}(${c.name}) AS ${c.name}`).join(', ');
  return `SELECT streamId, sessionId, class, arg_min({${SESSION_DIMENSIONS.map((d) => `'${d}': ${d}`).join(', ')}}, first_report) AS dims, ${columns}
    FROM read_parquet(${quotedString(path.join(folder, '*.parquet'))}, hive_partitioning = false, union_by_name = true)
    GROUP BY streamId, sessionId, class`;
}

async function parquetFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.parquet')).map((e) => path.relative(dir, path.join(e.parentPath, e.name))).sort();
}
