// `p2ptel reports`: the nightly report run inline, on a real warehouse built by the CLI itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { cli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/warehouse.ts';
import { readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
  const gen = await cli(['generate', '--warehouse', dir, '--customers', 'acme,globex', '--streams', '2', '--sessions', '30', '--hours', '2', '--start', '2026-11-19T20:00:00Z']);
  expect(gen.code, gen.stderr).toBe(0);
}, 60_000);
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('cli reports', () => {
  it('says there is nothing to render before a snapshot is published, and exits 6', async () => {
    const r = await cli(['reports', '--warehouse', dir]);
    expect(r.code, r.stderr).toBe(6);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error: no snapshot is published yet: nothing to render (run `p2ptel pipeline` first)');
  });

  it('renders one customer with --customer, and only that one', async () => {
    expect((await cli(['pipeline', '--warehouse', dir, '--as-of', '2026-11-19T22:00:00Z'])).code).toBe(0);
    const snapshot = (await readCurrent(warehouseLayout(dir)))!.snapshot;
    const r = await cli(['reports', '--warehouse', dir, '--customer', 'acme']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`pilot reports of snapshot ${snapshot}: 2 streams of 1 customer (1 rendered, 0 unchanged)`);
    expect(r.stdout).toMatch(new RegExp(`acme\\s+2\\s+rendered\\s+\\d+(?:\\.\\d+)? m?s\\s+reports/${snapshot}/acme/index.html`));
    const root = path.join(dir, 'reports', snapshot);
    expect(await fs.readdir(root)).toEqual(['acme']);
    // Two streams: each in three formats and its signed statement.
    expect((await fs.readdir(path.join(root, 'acme', 'streams'))).length).toBe(8);
  });

  it('renders the others, leaves unchanged ones alone, and renders everything again with --force', async () => {
    const all = await cli(['reports', '--warehouse', dir]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/4 streams of 2 customers \(1 rendered, 1 unchanged\)/);
    expect(all.stdout).toMatch(/acme\s+2\s+unchanged/);
    expect(all.stdout).toMatch(/globex\s+2\s+rendered/);
    const forced = await cli(['reports', '--warehouse', dir, '--force']);
    expect(forced.stdout).toMatch(/\(2 rendered, 0 unchanged\)/);
  });

  it('refuses a customer without data and a malformed id, with a clear error', async () => {
    const none = await cli(['reports', '--warehouse', dir, '--customer', 'acme,initech']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^error: no data for initech in snapshot \S+: nothing to render for it\n$/);
    const bad = await cli(['reports', '--warehouse', dir, '--customer', 'Not An Id']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: --customer: /);
  });
});
