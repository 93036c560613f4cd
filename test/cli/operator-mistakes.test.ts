// Operator mistakes through the real CLI: an asOf that cannot be right is refused with nothing
// written; a snapshot from the future that got published makes every later run exit 3 (not 0)
// until the operator goes back with `snapshots use` or `pipeline --replace-current`; a customer
// whose reports cannot be rendered does not stop the others, and the run exits 5 naming it; the
// reports run clears what a killed run left.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { cli, cliAll } from '../helpers/cli.ts';
import { tempDir } from '../helpers/warehouse.ts';
import { readCurrent, readHistory } from '../../warehouse/snapshots/snapshot-folders.ts';
import { warehouseLayout, hostScratchDir } from '../../warehouse/layout.ts';

let dir: string;
const layout = () => warehouseLayout(dir);

beforeAll(async () => {
  dir = await tempDir();
  const gen = await cli(['generate', '--warehouse', dir, '--customers', 'acme,globex', '--streams', '2', '--sessions', '20', '--hours', '2', '--start', '2026-11-19T20:00:00Z']);
  expect(gen.code, gen.stderr).toBe(0);
}, 60_000);
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('operator mistakes', () => {
  it('refuses an asOf far ahead of the clock, or not a real instant, with exit 2 and nothing written', async () => {
    const cases: [string, RegExp][] = [
      ['2099-01-01T00:00:00Z', /asOf 2099-01-01T00:00:00.000Z is \d+ days ahead of this machine's clock \(more than AS_OF_MAX_SKEW_SECONDS=300\): refused, nothing written/],
      ['2026-02-30T00:00:00Z', /--as-of: an ISO 8601 date-time with a zone naming a real instant/],
      ['2026-11-20T24:00:00Z', /--as-of: an ISO 8601 date-time/],
      ['2026-11-20', /--as-of: an ISO 8601 date-time/],
    ];
    // Ten minutes ahead is refused too; the skew is configurable.
    const soon = new Date(Date.now() + 10 * 60_000).toISOString();
    // Six refusals, each checked on its own; a few processes at a time (none may write anything,
    // which the check after them proves for all).
    const results = await cliAll([
      ...cases.map(([asOf]): [string[]] => [['pipeline', '--warehouse', dir, '--as-of', asOf]]),
      [['pipeline', '--warehouse', dir, '--as-of', soon]],
      [['enqueue', 'rollup', '--warehouse', dir, '--as-of', '2099-01-01T00:00:00Z']],
    ]);
    for (const [i, [asOf, message]] of cases.entries()) {
      const r = results[i]!;
      expect(r.code, `${asOf}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(results[cases.length]!.code).toBe(2);
    expect(results[cases.length + 1]!.code).toBe(2);
    await expect(fs.stat(layout().snapshots)).rejects.toThrow();
  });

  it('a snapshot from the future makes later runs exit 3 until an operator goes back', async () => {
    const good = await cli(['pipeline', '--warehouse', dir, '--as-of', '2026-11-19T22:00:00Z']);
    expect(good.code, good.stderr).toBe(0);
    const goodId = (await readCurrent(layout()))!.snapshot;
    // The mistake, let through by a huge skew setting.
    const future = await cli(['pipeline', '--warehouse', dir, '--as-of', '2099-01-01T00:00:00Z'], { AS_OF_MAX_SKEW_SECONDS: '9999999999' });
    expect(future.code, future.stderr).toBe(0);
    const futureId = (await readCurrent(layout()))!.snapshot;

    const blocked = await cli(['pipeline', '--warehouse', dir]);
    expect(blocked.code, blocked.stderr).toBe(3);
    expect(blocked.stdout).toContain('written but not published');
    expect(blocked.stderr).toContain(`the current snapshot ${futureId} has asOf 2099-01-01T00:00:00.000Z`);
    expect(blocked.stderr).toContain('snapshots use <id>');

    const list = await cli(['snapshots', 'list', '--warehouse', dir]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`${futureId}\\s+2099-01-01T00:00:00.000Z\\s+current, asOf \\d+ days ahead of the clock`));
    expect(list.stdout).toContain(goodId);

    expect((await cli(['snapshots', 'use', 'no-such-snapshot', '--warehouse', dir])).code).toBe(2);
    const back = await cli(['snapshots', 'use', goodId, '--warehouse', dir]);
    expect(back.code, back.stderr).toBe(0);
    expect((await readCurrent(layout()))!.snapshot).toBe(goodId);
    expect(JSON.parse(await fs.readFile(`${layout().catalog}.snapshot.json`, 'utf8'))).toEqual({ snapshot: goodId });

    const after = await cli(['pipeline', '--warehouse', dir]);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toContain('published');
    expect((await readHistory(layout())).at(-1)).toBe((await readCurrent(layout()))!.snapshot);
  }, 120_000);

  it('pipeline --replace-current is the other way back', async () => {
    expect((await cli(['pipeline', '--warehouse', dir, '--as-of', '2098-01-01T00:00:00Z'], { AS_OF_MAX_SKEW_SECONDS: '9999999999' })).code).toBe(0);
    expect((await cli(['pipeline', '--warehouse', dir])).code).toBe(3);
    const r = await cli(['pipeline', '--warehouse', dir, '--replace-current']);
    expect(r.code, r.stderr).toBe(0);
    expect(Date.parse((await readCurrent(layout()))!.asOf)).toBeLessThan(Date.now());
  }, 120_000);

  it('reports: one customer that cannot be rendered is skipped and named, the others are published, exit 5', async () => {
    const current = (await readCurrent(layout()))!;
    // Debris of a killed report run: a scratch folder of a dead process and a folder moved aside.
    const scratch = path.join(hostScratchDir(layout()), 'reports-999999-abcdef');
    await fs.mkdir(scratch, { recursive: true });
    const aside = path.join(layout().reports, current.snapshot, '.acme.old-0badc0de');
    await fs.mkdir(aside, { recursive: true });
    // A landed file of globex rewritten in place after the rollup: its figures cannot be read.
    const globexDir = path.join(layout().rawReports, 'customer=globex');
    for (const day of await fs.readdir(globexDir)) {
      for (const f of await fs.readdir(path.join(globexDir, day))) await fs.writeFile(path.join(globexDir, day, f), 'overwritten in place');
    }
    const r = await cli(['reports', '--warehouse', dir]);
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toMatch(/error: the other reports were published, but \d+ not rendered \((customer globex|globex:[^:]+): /);
    expect(r.stdout).toContain('acme');
    await expect(fs.stat(path.join(layout().reports, current.snapshot, 'acme', 'index.html'))).resolves.toBeTruthy();
    await expect(fs.stat(path.join(layout().reports, current.snapshot, 'globex', 'index.html'))).rejects.toThrow();
    await expect(fs.stat(scratch)).rejects.toThrow();
    await expect(fs.stat(aside)).rejects.toThrow();
  }, 120_000);
});
