// Crash safety of the collector, with real `p2ptel collect` processes: two collectors share the
// warehouse under continuous load (every report a unique id); each is stopped with SIGKILL or
// SIGTERM at random moments (mid-flush, mid-landing, right after one: the flush runs every 0.4 s)
// and restarted on its spool, several times in a row. Every report that got a success answer is in
// the landing area exactly once after the final SIGTERM flush, no report is there twice, and no
// half-written Parquet file is ever visible there (a watcher reads every file as soon as it appears).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import fs from 'node:fs/promises';
import { openTestWarehouse, type TestWarehouse } from '../helpers/warehouse.ts';
import { sampleReport } from '../helpers/collector.ts';
import { addTenant } from '../../control/tenants.ts';
import { addIngestKey } from '../../control/ingest-keys.ts';
import { listFiles } from '../../lib/fsx.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { PROJECT_ROOT } from '../../lib/version.ts';

let wh: TestWarehouse;
let key: string;
/** The two collectors: each its port and spool. */
let places: { port: number; spoolDir: string }[];

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

function startChild(n: number): ChildProcess {
  const { port, spoolDir } = places[n]!;
  return spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/p2ptel.js'), 'collect', '--warehouse', wh.root, '--port', String(port), '--spool', spoolDir], {
    env: { ...process.env, LOG_LEVEL: 'warn', DUCKDB_THREADS: '1', DUCKDB_MEMORY_LIMIT: '512MB', COLLECTOR_FLUSH_SECONDS: '0.4', COLLECTOR_FLUSH_REPORTS: '1500' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

async function waitReady(child: ChildProcess, n: number): Promise<void> {
  const { port } = places[n]!;
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
  places = [];
  for (const name of ['crash-a', 'crash-b']) places.push({ port: await freePort(), spoolDir: path.join(wh.root, 'spool', name) });
}, 60_000);

afterAll(async () => {
  await wh?.close();
});

describe('collector crash safety', () => {
  it('lands every acknowledged report exactly once across SIGKILLs and SIGTERMs, and never shows a partial Parquet file', async () => {
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
      const { port } = places[n % 2]!;
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
          /* not acknowledged: nothing owed */
        }
        // SDKs post every few seconds; here every 20 ms, enough to be mid-flush at any moment
        // without saturating the two cores the collectors and the test share.
        await new Promise((r) => setTimeout(r, 20));
      }
    };

    const children = [startChild(0), startChild(1)];
    await Promise.all(children.map((c, n) => waitReady(c, n)));
    const load = Promise.all([0, 1, 2, 3].map(sdk));
    for (let stop = 0; stop < 5; stop++) {
      await new Promise((r) => setTimeout(r, 200 + Math.random() * 700));
      const n = Math.floor(Math.random() * 2);
      // At least one of each: a clean stop lands what it holds; a kill leaves it to the next start.
      const signal = stop === 0 ? 'SIGTERM' : stop === 1 ? 'SIGKILL' : Math.random() < 0.5 ? 'SIGTERM' : 'SIGKILL';
      children[n]!.kill(signal);
      const code = await exited(children[n]!);
      if (signal === 'SIGTERM') expect(code).toBe(0);
      children[n] = startChild(n);
      await waitReady(children[n]!, n);
    }
    await new Promise((r) => setTimeout(r, 800));
    loading = false;
    await load;
    for (const child of children) child.kill('SIGTERM');
    for (const child of children) expect(await exited(child)).toBe(0);
    await watcher;

    expect(problems).toEqual([]);
    expect(acked.size).toBeGreaterThan(1000);
    const files = await listFiles(wh.layout.rawReports, '.parquet');
    const [counts] = await wh.db.withSession((s) =>
      s.all<{ rows: number; ids: number }>(`SELECT count(*)::INTEGER AS rows, count(DISTINCT reportId)::INTEGER AS ids FROM read_parquet([${files.map((f) => quotedString(f)).join(', ')}])`),
    );
    const landed = await wh.db.withSession((s) =>
      s.all<{ reportId: string }>(`SELECT DISTINCT reportId FROM read_parquet([${files.map((f) => quotedString(f)).join(', ')}])`),
    );
    const have = new Set(landed.map((r) => r.reportId));
    const missing = [...acked].filter((id) => !have.has(id));
    expect(missing).toEqual([]);
    // Exactly once: no report landed twice (an unanswered request may have landed, once).
    expect(counts!.rows).toBe(counts!.ids);
    // The final flushes left nothing behind in the spools.
    for (const { spoolDir } of places) expect((await fs.readdir(spoolDir)).filter((n) => n.startsWith('seg-'))).toEqual([]);
  }, 180_000);
});
