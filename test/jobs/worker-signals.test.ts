// A worker stopped by SIGTERM at any moment of its start-up (loading its code, reaching Redis,
// opening DuckDB, starting its queue workers) stops cleanly and exits 0, as it does once ready.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
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

/**
 * Resolves once the worker `pid` keeps its signals: bin/p2ptel.js names the process `p2ptel
 * worker` (its /proc/<pid>/cmdline) right after it starts listening. Before that line, the
 * signal's default action ends any process (Node's own handler re-raises it), and how long Node
 * takes to get there depends on the machine and its load (over 300 ms on a busy CI run).
 */
async function untilListening(pid: number, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.startsWith('p2ptel worker')) return;
    await sleep(2);
  }
  throw new Error(`worker ${pid} did not name itself within ${timeoutMs} ms`);
}

describe('SIGTERM during start-up', () => {
  it('exits 0 whenever it arrives', async () => {
    const exits = [];
    // From the first moment the worker catches the signal (bin/p2ptel.js's first lines) to past
    // its readiness: loading, Redis, DuckDB, queue workers.
    for (const delayMs of [0, 150, 300, 500, 700, 1000, 1400, 2200]) {
      const w = startWorker(env);
      await untilListening(w.child.pid!);
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
