// Every command parses its flags (and positional arguments) with its zod schema before it does
// anything: a bad value is one line naming the flag, exit 2, and nothing written.
import { afterAll, beforeAll, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import { cli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/warehouse.ts';

let dir: string;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

it('refuses a bad flag value of a command, a subcommand and a command with an argument: exit 2, one line naming it, nothing written', async () => {
  const warehouse = path.join(dir, 'never-made');
  const cases: [string[], string][] = [
    [['collect', '--warehouse', warehouse, '--port', '70000'], 'error: --port: '],
    [['tenants', 'add', '--warehouse', warehouse, '--customer', 'acme', '--name', 'Acme', '--savings-share-pct', '101'], 'error: --savings-share-pct: from 0 to 100'],
    // A Redis nobody listens on: were the flag let through, nothing could be enqueued anywhere.
    [['enqueue', 'reports', '--warehouse', warehouse, '--redis', 'redis://127.0.0.1:1', '--timeout', '-5'], 'error: --timeout: greater than 0'],
  ];
  const results = await Promise.all(cases.map(([args]) => cli(args)));
  results.forEach((r, i) => {
    const [args, message] = cases[i]!;
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
    expect(r.stderr.startsWith(message), `${args.join(' ')}: ${r.stderr}`).toBe(true);
    expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    expect(r.stdout).toBe('');
  });
  await expect(fs.stat(warehouse)).rejects.toThrow(/ENOENT/);
});
