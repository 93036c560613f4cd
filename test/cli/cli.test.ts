// The CLI as a user meets it: help on every command, one clear line on bad input, and the
// generate → pipeline path printing what it did.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import net from 'node:net';
import { cli, cliAll } from '../helpers/cli.ts';
import { tempDir } from '../helpers/warehouse.ts';

const COMMANDS = ['start', 'generate', 'pipeline', 'compact', 'reports', 'serve', 'token', 'tenants add', 'tenants list', 'worker', 'schedule', 'enqueue', 'runs'];
const QUEUE_COMMANDS = ['worker', 'schedule', 'enqueue', 'runs'];
let dir: string;

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const addr = srv.address();
  await new Promise((r) => srv.close(r));
  return typeof addr === 'object' && addr ? addr.port : 1;
}

beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('cli', () => {
  it('has --help on every command, naming --warehouse', async () => {
    // Independent processes: started a few at a time, each checked on its own.
    const [top, ...each] = await cliAll([[['--help']], ...COMMANDS.map((c): [string[]] => [[...c.split(' '), '--help']])]);
    expect(top!.code).toBe(0);
    for (const c of COMMANDS) expect(top!.stdout).toContain(c.split(' ')[0]);
    for (const [i, c] of COMMANDS.entries()) {
      const r = each[i]!;
      expect(r.code, c).toBe(0);
      expect(r.stdout).toContain(`Usage: p2ptel ${c}`);
      expect(r.stdout).toContain('--warehouse <dir>');
      if (QUEUE_COMMANDS.includes(c)) {
        expect(r.stdout).toContain('--redis <url>');
        expect(r.stdout).toContain('--queue-prefix <prefix>');
      }
    }
  });

  it('answers bad input with one clear line and exit code 2', async () => {
    const cases: [string[], RegExp][] = [
      [['generate', '--warehouse', dir, '--streams', '0'], /--streams: greater than 0/],
      [['generate', '--warehouse', dir, '--start', 'yesterday'], /--start: an ISO 8601 date-time with a zone/],
      [['generate', '--warehouse', dir, '--customers', 'Acme Corp'], /customer id is 1–64 characters/],
      [['pipeline', '--warehouse', dir, '--as-of', '2026-13-45T00:00:00Z'], /--as-of: an ISO 8601 date-time with a zone naming a real instant/],
      [['enqueue', 'rolup', '--warehouse', dir], /unknown run kind "rolup": rollup or reports/],
      [['enqueue', 'rollup', '--warehouse', dir, '--as-of', 'now'], /--as-of: an ISO 8601 date-time with a zone/],
      [['runs', '--warehouse', dir, '--redis', 'localhost:6379'], /--redis: a redis:\/\/ or rediss:\/\/ URL/],
      [['schedule', '--warehouse', dir, '--rollup-cron', 'every 5 minutes'], /--rollup-cron: a cron pattern of five fields/],
      [['schedule', '--warehouse', dir, '--rollup-every', '5 seconds'], /--rollup-every: a duration such as 5s, 30s or 2m/],
      [['schedule', '--warehouse', dir, '--rollup-every', '0.5s'], /--rollup-every: a duration such as 5s, 30s or 2m, from 1s to 24h/],
      [['schedule', '--warehouse', dir, '--rollup-every', '5s', '--rollup-cron', '* * * * *'], /--rollup-every \(ROLLUP_EVERY\) and --rollup-cron \(ROLLUP_SCHEDULE\) are exclusive/],
      [['worker', '--warehouse', dir, '--concurrency', '0'], /--concurrency: greater than 0/],
      [['worker', '--warehouse', dir, '--metrics-port', '70000'], /--metrics-port: /],
      [['serve', '--warehouse', dir, '--metrics-port', 'x'], /--metrics-port: /],
      [['runs', '--warehouse', dir, '--queue-prefix', 'a:b'], /--queue-prefix: 1–64 characters/],
      // Commands on the Flags + run form, their flags and positional arguments checked by one schema.
      [['runs', '--warehouse', dir, '--limit', '0'], /--limit: greater than 0/],
      [['collect', '--warehouse', dir, '--port', '70000'], /--port: from 0 to 65535/],
      [['generate', '--warehouse', dir, '--batch', '5000'], /--batch: at most 2000/],
      [['tenants', 'add', '--warehouse', dir, '--customer', 'acme', '--name', 'A', '--savings-share-pct', '150'], /--savings-share-pct: from 0 to 100/],
      [['snapshots', 'use', ' ', '--warehouse', dir], /<id>: a snapshot id/],
      [['compact', '--warehouse', dir, '--date', '2026-02-30'], /--date: a UTC date, YYYY-MM-DD/],
      [['compact', '--warehouse', dir, '--customer', 'Acme Corp'], /--customer: a customer id/],
    ];
    const results = await cliAll([...cases.map(([args]): [string[]] => [args]), [['frobnicate']]]);
    for (const [i, [args, message]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^error: /);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/); // no stack trace
    }
    const unknown = results.at(-1)!;
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
  });

  it('says in one line, quickly, that Redis cannot be reached, and exits non-zero', async () => {
    const port = await closedPort();
    const url = `redis://127.0.0.1:${port}`;
    const runs: [string[], Record<string, string>][] = [
      [['enqueue', 'rollup', '--redis', url], {}],
      [['enqueue', 'reports', '--wait'], { REDIS_URL: url }],
      [['runs', '--redis', url], {}],
      [['schedule'], { REDIS_URL: url }],
      [['worker', '--redis', url], {}],
    ];
    // Two at a time; each process's own time, from its start to its exit, is what is bounded.
    const timed = await cliAll(
      runs.map(([args, env]): [string[], Record<string, string>] => [[...args, '--warehouse', dir], env]),
      2,
    );
    for (const [i, [args, env]] of runs.entries()) {
      const r = timed[i]!;
      const what = `${args.join(' ')} ${JSON.stringify(env)}`;
      expect(r.code, what).toBe(1);
      expect(r.stderr.trim().split('\n'), what).toHaveLength(1);
      expect(r.stderr).toContain(`error: cannot reach Redis at ${url} (connect ECONNREFUSED 127.0.0.1:${port}); start Redis or point --redis / REDIS_URL at one`);
      expect(r.ms, what).toBeLessThan(10_000);
    }
  });

  it('reads WAREHOUSE_DIR, generates and rolls up, saying what it did', async () => {
    const env = { WAREHOUSE_DIR: dir };
    const gen = await cli(['generate', '--customers', 'acme', '--streams', '2', '--sessions', '30', '--start', '2026-11-20T00:00:00Z', '--hours', '2', '--seed', '4'], env);
    expect(gen.code, gen.stderr).toBe(0);
    expect(gen.stdout).toMatch(/generated [\d,]+ reports \([\d,]+ delivered twice\) for 2 streams/);
    const run = await cli(['pipeline', '--as-of', '2026-11-20T02:00:00Z'], env);
    expect(run.code, run.stderr).toBe(0);
    for (const label of ['files read', 'reports read', 'duplicates dropped', 'files quarantined', 'streams', 'time taken']) {
      expect(run.stdout).toContain(label);
    }
    expect(run.stdout).toMatch(/snapshot 20261120T020000000Z-[0-9a-f]{8} published/);
    expect(run.stderr).toBe(''); // quiet unless something is wrong
    const read = Number(/files read +(\d+)/.exec(run.stdout)![1]);
    expect(read).toBeGreaterThan(1);

    const compact = await cli(['compact', '--force', '--customer', 'acme'], env);
    expect(compact.code, compact.stderr).toBe(0);
    expect(compact.stdout).toContain(`compacted 1 partitions: ${read} files`);
    const again = await cli(['pipeline', '--as-of', '2026-11-20T02:00:00Z', '--no-compact'], env);
    expect(again.stdout).toMatch(/files read +1 /);
    const counts = (out: string) => out.split('\n').filter((l) => /^ {2}(reports read|duplicates dropped|after asOf|reports counted|streams) /.test(l));
    expect(counts(again.stdout)).toEqual(counts(run.stdout));
    expect(counts(run.stdout)).toHaveLength(5);
  });
});
