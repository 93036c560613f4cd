// `enqueue --wait` through a real Redis restart: a redis-server of this test's own, persisting with
// the append-only file as docs/jobs.md recommends, is stopped and started again while the command
// waits; the run survives the restart, a worker started afterwards runs it, and the waiting command
// reports its real outcome (exit 0, published) after saying that it lost and found Redis again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { jobEnv, killAllWorkers, readyWorker, uniquePrefix } from '../helpers/jobs.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { generateReports } from '../../warehouse/sample/generate.ts';
import { readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { PROJECT_ROOT } from '../../lib/version.ts';

const START = new Date('2026-11-20T00:00:00Z');
const AS_OF = '2026-11-20T02:00:00.000Z';

let wh: TestWarehouse;
let redis: RedisServer;
let env: Record<string, string>;

beforeAll(async () => {
  wh = await openTestWarehouse();
  await generateReports(wh.db, wh.layout, { customers: ['acme'], streams: 1, sessions: 20, start: START, hours: 2, seed: 8 });
  redis = await startRedisServer({ appendonly: true });
  env = jobEnv(wh.root, uniquePrefix('restart'), { REDIS_URL: redis.url });
}, 60_000);

afterAll(async () => {
  await killAllWorkers();
  await redis?.stop();
  await wh?.close();
});

describe('enqueue --wait and a Redis restart', () => {
  it('rides through the restart and reports how the run really ended', async () => {
    // No worker yet: the run waits in Redis while Redis restarts.
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin', 'p2ptel.js'), 'enqueue', 'rollup', '--as-of', AS_OF, '--wait'], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    // The run is added (the command says so) before Redis goes away.
    for (let i = 0; i < 200 && !/added|waiting|queued/i.test(stdout + stderr); i++) await new Promise((r) => setTimeout(r, 100));
    await redis.restart();
    const worker = await readyWorker(env);
    const code = await exited;
    worker.child.kill('SIGTERM');
    await worker.exited;

    expect(code, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toMatch(new RegExp(`rollup run ${AS_OF.replace(/\./g, '\\.')} completed in .*: snapshot \\S+ published`));
    const current = await readCurrent(wh.layout);
    expect(current?.asOf).toBe(AS_OF);
  }, 120_000);
});
