// The compiled build (bin/build.js) that the `p2ptel` command runs, made afresh into a folder of its
// own: the other tests run the TypeScript sources, so here the JavaScript itself is run — help, a
// tenant and an ingest key, reports posted through the collector (its batch worker threads started
// on their compiled module), rolled up and rendered — which also checks that the files read at run
// time (warehouse/sql, templates, config/platform.json, package.json) are found from dist/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from '../../lib/version.ts';
import { tempDir } from '../helpers/warehouse.ts';
import type { CliResult } from '../helpers/cli.ts';

const OUT = `dist-test-${process.pid}`;
const outDir = path.join(PROJECT_ROOT, OUT);
let dir: string;

function node(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const compiled = (args: string[], env: Record<string, string> = {}) => node([path.join(outDir, 'main.js'), ...args], env);

beforeAll(async () => {
  const built = await node(['bin/build.js', '--out', OUT]);
  expect(built.code, built.stderr).toBe(0);
  dir = await tempDir();
}, 120_000);

afterAll(async () => {
  await fs.rm(outDir, { recursive: true, force: true });
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('compiled build', () => {
  it('puts every file directly in its folder, entries and chunks, and records its sources', async () => {
    const entries = await fs.readdir(outDir, { withFileTypes: true });
    expect(entries.filter((e) => !e.isFile())).toEqual([]);
    const names = entries.map((e) => e.name);
    expect(names).toContain('main.js');
    expect(names).toContain('batch-worker.js');
    const record = JSON.parse(await fs.readFile(path.join(outDir, 'build.json'), 'utf8')) as { startedAt: number; inputs: string[] };
    expect(record.inputs).toContain('cli/main.ts');
    expect(record.inputs).toContain('collector/batch-worker.ts');
    expect(record.inputs.every((f) => f.endsWith('.ts') && !f.startsWith('node_modules/'))).toBe(true);
    // Every import resolved to compiled code: none left on a TypeScript file.
    for (const name of names.filter((n) => n.endsWith('.js'))) {
      expect(await fs.readFile(path.join(outDir, name), 'utf8'), name).not.toMatch(/(from |import\()["'][^"']*\.ts["']/);
    }
  });

  it('runs the CLI: --help on the command table', async () => {
    const r = await compiled(['--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Usage: p2ptel');
    for (const c of ['start', 'generate', 'pipeline', 'reports', 'serve', 'collect', 'worker']) expect(r.stdout).toContain(c);
    expect(r.stderr).toBe('');
  });

  it('collects through compiled batch workers, rolls up and renders the reports', async () => {
    const wh = ['--warehouse', dir];
    expect((await compiled(['tenants', 'add', ...wh, '--customer', 'acme', '--name', 'ACME'])).code).toBe(0);
    const added = await compiled(['ingest-keys', 'add', ...wh, '--customer', 'acme']);
    expect(added.code, added.stderr).toBe(0);
    const key = /^(ingest_\S+)$/m.exec(added.stdout)?.[1];
    expect(key, added.stdout).toBeDefined();

    const collector = spawn(process.execPath, [path.join(outDir, 'main.js'), 'collect', ...wh, '--port', '0', '--spool', path.join(dir, 'spool', 'c')], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, COLLECTOR_WORKERS: '1', LOG_LEVEL: 'warn', DUCKDB_THREADS: '1', DUCKDB_MEMORY_LIMIT: '512MB' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    const exited = new Promise<number | null>((resolve) => collector.once('exit', resolve));
    try {
      // It listens only once its batch worker has loaded: a worker that cannot start stops it.
      const url = await new Promise<string>((resolve, reject) => {
        collector.stderr!.on('data', (d: Buffer) => {
          err += d.toString();
          const m = /collector listening on (http:\/\/\S+)/.exec(err);
          if (m) resolve(m[1]!);
        });
        void exited.then((code) => reject(new Error(`collector exited (${code}): ${err}`)));
      });
      const posted = await compiled(['generate', ...wh, '--customers', 'acme', '--streams', '2', '--sessions', '20', '--hours', '2', '--start', '2026-11-20T00:00:00Z', '--post', url, '--key', key!]);
      expect(posted.code, posted.stderr).toBe(0);
      expect(posted.stdout).toMatch(/accepted\s+[1-9]/);
    } finally {
      collector.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(err.trim().split('\n')).toHaveLength(1); // the listening line alone: no warning, no error

    const run = await compiled(['pipeline', ...wh, '--as-of', '2026-11-20T02:00:00Z']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/snapshot \S+ published/);
    const reports = await compiled(['reports', ...wh]);
    expect(reports.code, reports.stderr).toBe(0);
    expect(reports.stdout).toMatch(/2 streams of 1 customer \(1 rendered, 0 unchanged\)/);
  });
});
