// Crash safety of the collector, with the real `p2ptel collect` process: under continuous load
// (every report a unique id) it is killed with SIGKILL at random moments and restarted on the same
// spool. Every report that got a success answer is in the landing area after the final SIGTERM
// flush, and no half-written Parquet file is ever visible there (a watcher reads every file as soon
// as it appears).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import fs from 'node:fs/promises';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { sampleReport } from '../helpers/collector.ts';
import { addTenant } from '../../warehouse/control/tenants.ts';
import { addIngestKey } from '../../warehouse/control/ingest-keys.ts';
import { listFiles } from '../../lib/fsx.ts';
import { quotedString } from '../../warehouse/duckdb.ts';
import { PROJECT_ROOT } from '../../lib/version.ts';

let wh: TestWarehouse;
let key: string;
let port: number;
let spoolDir: string;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

function startChild(): ChildProcess {
  return spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'collect', '--warehouse', wh.root, '--port', String(port), '--spool', spoolDir], {
    env: { ...process.env, LOG_LEVEL: 'warn', DUCKDB_THREADS: '1', DUCKDB_MEMORY_LIMIT: '512MB', COLLECTOR_FLUSH_SECONDS: '0.4', COLLECTOR_FLUSH_REPORTS: '1500' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

async function waitReady(child: ChildProcess): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`collector exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('collector did not start');
}

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));

beforeAll(async () => {
  wh = await openTestWarehouse();
  await addTenant(wh.layout, { customerId: 'acme', name: 'ACME', cdnPricePerGb: null, savingsSharePct: 25 });
  key = (await addIngestKey(wh.layout, { customer: 'acme' })).key;
  port = await freePort();
  spoolDir = path.join(wh.root, 'spool', 'crash');
}, 60_000);

afterAll(async () => {
  await wh?.close();
});

describe('collector crash safety', () => {
  it('loses no acknowledged report across SIGKILLs, and never shows a partial Parquet file', async () => {
    const acked = new Set<string>();
    let counter = 0;
    let loading = true;
    const problems: string[] = [];

    // The watcher: every file that appears in the landing area must be complete Parquet.
    const verified = new Set<string>();
    const watcher = (async () => {
      while (loading) {
        const entries = await fs.readdir(wh.layout.rawReports, { recursive: true, withFileTypes: true }).catch(() => []);
        for (const f of entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name))) {
          if (verified.has(f)) continue;
          if (!f.endsWith('.parquet')) {
            problems.push(`a non-Parquet file is visible in the landing area: ${path.basename(f)}`);
            verified.add(f);
            continue;
          }
          try {
            await wh.db.withSession((s) => s.all(`SELECT count(*) FROM read_parquet(${quotedString(f)})`));
            verified.add(f);
          } catch (err) {
            problems.push(`unreadable landed file ${path.basename(f)}: ${(err as Error).message.split('\n')[0]}`);
            verified.add(f);
          }
        }
        await new Promise((r) => setTimeout(r, 30));
      }
    })();

    // The load: four SDKs posting batches of unique reports, ignoring failures (a failed batch was
    // not acknowledged, so nothing of it is owed).
    const ts = new Date(Date.now() - 60_000);
    const sdk = async (n: number) => {
      while (loading) {
        const ids: string[] = [];
        const reports = Array.from({ length: 40 }, () => {
          const r = sampleReport('acme:live-main', ts, counter++, { reportId: `crash-${n}-${counter}` });
          ids.push(r['reportId'] as string);
          return r;
        });
        try {
          const res = await fetch(`http://127.0.0.1:${port}/v1/session-reports`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', 'X-Ingest-Key': key },
            body: JSON.stringify({ reports }),
          });
          if (res.status === 202) for (const id of ids) acked.add(id);
          else await res.text();
        } catch {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    };

    let child = startChild();
    await waitReady(child);
    const load = Promise.all([0, 1, 2, 3].map(sdk));
    for (let kill = 0; kill < 4; kill++) {
      await new Promise((r) => setTimeout(r, 300 + Math.random() * 1200));
      child.kill('SIGKILL');
      await exited(child);
      child = startChild();
      await waitReady(child);
    }
    await new Promise((r) => setTimeout(r, 800));
    loading = false;
    await load;
    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
    await watcher;

    expect(problems).toEqual([]);
    expect(acked.size).toBeGreaterThan(1000);
    const files = await listFiles(wh.layout.rawReports, '.parquet');
    const landed = await wh.db.withSession((s) =>
      s.all<{ reportId: string }>(`SELECT DISTINCT reportId FROM read_parquet([${files.map((f) => quotedString(f)).join(', ')}])`),
    );
    const have = new Set(landed.map((r) => r.reportId));
    const missing = [...acked].filter((id) => !have.has(id));
    expect(missing).toEqual([]);
    // The final flush left nothing behind in the spool.
    expect((await fs.readdir(spoolDir)).filter((n) => n.startsWith('seg-'))).toEqual([]);
  }, 180_000);
});
