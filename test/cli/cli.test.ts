// The CLI as a user meets it: help on every command, one clear line on bad input, and the
// generate → pipeline path printing what it did.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import { cli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/warehouse.ts';

const COMMANDS = ['start', 'generate', 'pipeline', 'serve', 'token', 'tenants add', 'tenants list'];
let dir: string;

beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('cli', () => {
  it('has --help on every command, naming --warehouse', async () => {
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    for (const c of COMMANDS) expect(top.stdout).toContain(c.split(' ')[0]);
    for (const c of COMMANDS) {
      const r = await cli([...c.split(' '), '--help']);
      expect(r.code, c).toBe(0);
      expect(r.stdout).toContain(`Usage: p2ptel ${c}`);
      expect(r.stdout).toContain('--warehouse <dir>');
    }
  });

  it('answers bad input with one clear line and exit code 2', async () => {
    const cases: [string[], RegExp][] = [
      [['generate', '--warehouse', dir, '--streams', '0'], /--streams: greater than 0/],
      [['generate', '--warehouse', dir, '--start', 'yesterday'], /--start: an ISO 8601 date-time with a zone/],
      [['generate', '--warehouse', dir, '--customers', 'Acme Corp'], /customer id is 1–64 characters/],
      [['pipeline', '--warehouse', dir, '--as-of', '2026-13-45T00:00:00Z'], /--as-of: not a real date/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^error: /);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\bat .*\.ts:\d+/); // no stack trace
    }
    const unknown = await cli(['frobnicate']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
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
  });
});
