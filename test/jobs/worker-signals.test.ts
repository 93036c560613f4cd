// A worker stopped by SIGTERM at any moment of its start-up (loading its code, reaching Redis,
// opening DuckDB, starting its queue workers) stops cleanly and exits 0, as it does once ready.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { jobEnv, killAllWorkers, startWorker, uniquePrefix } from '../helpers/jobs.ts';

let wh: TestWarehouse;
let env: Record<string, string>;

beforeAll(async () => {
  wh = await openTestWarehouse();
  env = jobEnv(wh.root, uniquePrefix('signals'));
}, 60_000);

afterAll(async () => {
  await killAllWorkers();
  await wh?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('SIGTERM during start-up', () => {
  it('exits 0 whenever it arrives', async () => {
    const exits = [];
    // From past Node's own start (before its first line of JavaScript, the signal's default action
    // ends any process) to past the worker's readiness: loading, Redis, DuckDB, queue workers.
    for (const delayMs of [300, 450, 600, 800, 1000, 1300, 1700, 2500]) {
      const w = startWorker(env);
      await sleep(delayMs);
      w.child.kill('SIGTERM');
      const exit = await w.exited;
      exits.push({ delayMs, code: exit.code, signal: exit.signal });
    }
    expect(exits).toEqual(exits.map(({ delayMs }) => ({ delayMs, code: 0, signal: null })));
  });

  it('exits 0 at once while it is still waiting for Redis to answer', async () => {
    // A Redis that takes the connection and never answers: the worker waits for it, up to its timeout.
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const w = startWorker({ ...env, REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_CONNECT_TIMEOUT_MS: '20000' });
    await sleep(2000);
    const sent = Date.now();
    w.child.kill('SIGTERM');
    const exit = await w.exited;
    expect([exit.code, exit.signal]).toEqual([0, null]);
    expect(exit.at - sent).toBeLessThan(2000);
    silent.close();
  });
});
