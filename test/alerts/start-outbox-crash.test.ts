// `start` SIGKILLed with a delivery in its outbox (the receiver down, a try failed): the next
// `start` on the warehouse sends it, with the same webhook-id, once, verified with
// `standardwebhooks`. Real child processes, DuckDB, Parquet and HTTP on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_ROOT } from '../../lib/version.ts';
import { tempDir } from '../helpers/warehouse.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { warehouseLayout } from '../../warehouse/layout.ts';
import { listTenants } from '../../control/tenants.ts';
import { readState } from '../../alerts/state-store.ts';

let dir: string;
let rx: Receiver | null = null;
const children: ChildProcess[] = [];

function start(): { child: ChildProcess; waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray> } {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'start'], {
    env: { ...process.env, WAREHOUSE_DIR: dir, PORT: '0', COLLECTOR_PORT: '0', LOG_LEVEL: 'warn', DUCKDB_MEMORY_LIMIT: '1GB', COLLECTOR_WORKERS: '1', WEBHOOK_ALLOW_PRIVATE_TARGETS: '1', ROLLUP_IDLE_SECONDS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return {
    child,
    async waitFor(re, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = re.exec(out);
        if (m) return m;
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no ${re} in start's output (exit ${child.exitCode}):\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

const kill = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : (c.once('exit', () => r()), c.kill('SIGKILL'))));
const API = /API on (http:\S+) and collector on/;
const TOKEN = /its token, valid 30 days:\n(\S+)\n/;

beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  for (const c of children) await kill(c);
  await rx?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('start SIGKILLed with deliveries in its outbox', () => {
  it('the next start delivers them with the same webhook-id, once', async () => {
    const down = await startReceiver();
    const port = Number(new URL(down.url).port);
    await down.close();
    const first = start();
    const apiUrl = (await first.waitFor(API))[1]!;
    const token = (await first.waitFor(TOKEN))[1]!;
    const call = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(`${apiUrl}${p}`, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, json: (await res.json()) as any };
    };
    const hook = await call('POST', '/control/webhooks', { url: `http://127.0.0.1:${port}/hook`, events: ['incident.opened'] });
    expect(hook.status).toBe(201);
    const rule = await call('POST', '/control/alerts', { name: 'any sessions', metric: 'totalSessions', window: '24h', condition: 'above', threshold: 0 });
    expect(rule.status).toBe(201);

    // The next snapshot opens the incident; its delivery fails (nobody listens) and stays pending.
    const deadline = Date.now() + 90_000;
    let pending: { id: string; eventId: string } | undefined;
    while (!pending && Date.now() < deadline) {
      const list = await call('GET', `/control/webhooks/${hook.json.id}/deliveries`);
      pending = list.json.deliveries.find((d: { state: string; attempts: unknown[] }) => d.state === 'pending' && d.attempts.length > 0);
      if (!pending) await new Promise((r) => setTimeout(r, 200));
    }
    expect(pending).toBeDefined();
    await kill(first.child);

    rx = await startReceiver(port);
    const second = start();
    await second.waitFor(API);
    const [got] = await rx.waitFor(1, 60_000);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(rx.received).toHaveLength(1);
    expect(got!.headers['webhook-id']).toBe(pending!.eventId);
    const body = rx.verify(got!, hook.json.secret) as { type: string; data: { incident: { id: string; ruleId: string } } };
    expect(body).toMatchObject({ type: 'incident.opened', data: { incident: { ruleId: rule.json.id } } });
    const layout = warehouseLayout(dir);
    const [tenant] = await listTenants(layout);
    const incidents = (await readState(layout, tenant!.id)).incidents;
    expect(incidents.map((i) => i.id)).toEqual([body.data.incident.id]);
    expect(incidents[0]!.events.map((e) => e.id)).toEqual([pending!.eventId]);
  }, 240_000);
});
