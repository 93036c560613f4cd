// The nesting attack of bench:ingest: 8 clients post, without pause, a gzip'd body of about 6 KB
// that inflates to 3 million nested arrays (a key of their own tenant), while other clients (another
// tenant's key) post ordinary batches at a steady rate. Measured in one run against a collector of
// its own with the default limits: the other clients' p50 and p99 without the attack and during it,
// the collector's RSS before, at its peak during, and 5 s after the attack. Goals (issue 28): p50
// ≤ 50 ms and p99 ≤ 250 ms during the attack, RSS within +100 MB of its start 5 s after.
import fs from 'node:fs/promises';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { PROJECT_ROOT } from '../lib/version.ts';
import { pacedLoad, type PacedRequest, type PacedResult } from './paced-load.ts';
import { startChild, stopChild } from './servers.ts';

export interface AttackResult {
  bombBytes: number;
  inflatedBytes: number;
  quiet: PacedResult;
  attacked: PacedResult;
  attackers: { requests: number; byStatus: Record<string, number> };
  rssMiB: { before: number; peak: number; after5s: number };
  goals: { p50: boolean; p99: boolean; rss: boolean };
}

async function rssMiB(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024);
}

/** autocannon in a child process (its own CPU, not this one's event loop), posting one body. */
function attackers(url: string, key: string, bodyFile: string, seconds: number, connections: number): Promise<{ requests: number; byStatus: Record<string, number> }> {
  const bin = path.join(PROJECT_ROOT, 'node_modules', 'autocannon', 'autocannon.js');
  const args = [bin, '--json', '-c', String(connections), '-d', String(seconds), '-m', 'POST', '-i', bodyFile, '-H', 'Content-Type=application/json', '-H', 'Content-Encoding=gzip', '-H', `X-Ingest-Key=${key}`, `${url}/v1/session-reports`];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}`));
      const r = JSON.parse(out) as { requests: { total: number }; statusCodeStats?: Record<string, { count: number }> };
      resolve({ requests: r.requests.total, byStatus: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, v.count])) });
    });
  });
}

export async function nestingAttack(opts: {
  warehouse: string;
  logDir: string;
  /** The other clients' key and bodies (ordinary gzip'd batches). */
  key: string;
  bodies: Buffer[];
  attackerKey: string;
  seconds: number;
  /** The other clients' requests per second. */
  rate: number;
}): Promise<AttackResult> {
  const text = '['.repeat(3_000_000) + ']'.repeat(3_000_000);
  const bomb = gzipSync(text, { level: 9 });
  const bombFile = path.join(opts.logDir, 'nesting-bomb.json.gz');
  await fs.writeFile(bombFile, bomb);
  const collector = await startChild(opts.logDir, ['bin/p2ptel.js', 'collect', '--warehouse', opts.warehouse, '--port', '0', '--spool', path.join(opts.warehouse, 'spool', 'attack')], /collector listening on (\S+)/, { LOG_LEVEL: 'info' });
  try {
    const requests: PacedRequest[] = opts.bodies.map((body) => ({ method: 'POST', path: '/v1/session-reports', headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'X-Ingest-Key': opts.key }, body }));
    const paced = () => pacedLoad(collector.url, { rate: opts.rate, seconds: opts.seconds, connections: 4, requests });
    await pacedLoad(collector.url, { rate: opts.rate, seconds: 2, connections: 4, requests }); // warm-up
    const quiet = await paced();
    const pid = collector.child.pid!;
    const before = await rssMiB(pid);
    let peak = before;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await rssMiB(pid));
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const [attacked, attack] = await Promise.all([paced(), attackers(collector.url, opts.attackerKey, bombFile, opts.seconds, 8)]);
    sampling = false;
    await sampler;
    await new Promise((r) => setTimeout(r, 5_000));
    const after5s = await rssMiB(pid);
    return {
      bombBytes: bomb.length,
      inflatedBytes: text.length,
      quiet,
      attacked,
      attackers: attack,
      rssMiB: { before, peak, after5s },
      goals: { p50: attacked.p50 <= 50, p99: attacked.p99 <= 250, rss: after5s - before <= 100 },
    };
  } finally {
    await stopChild(collector);
  }
}

export function describeAttack(r: AttackResult, batch: number, rate: number): string[] {
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  return [
    `  nesting attack: 8 clients posting a ${(r.bombBytes / 1024).toFixed(1)} KiB gzip'd body (${(r.inflatedBytes / 2 ** 20).toFixed(1)} MiB of nested arrays) without pause; ${r.attackers.requests} posts, answers ${JSON.stringify(r.attackers.byStatus)}`,
    `    other clients (${rate * batch} reports/s, another key), without the attack: p50 ${r.quiet.p50} ms, p99 ${r.quiet.p99} ms; during it: p50 ${r.attacked.p50} ms (goal ≤ 50: ${met(r.goals.p50)}), p99 ${r.attacked.p99} ms (goal ≤ 250: ${met(r.goals.p99)}), non-2xx ${r.attacked.non2xx + r.attacked.errors}`,
    `    collector RSS: ${r.rssMiB.before} MiB before, ${r.rssMiB.peak} MiB at the peak, ${r.rssMiB.after5s} MiB 5 s after (goal ≤ +100 MB: ${met(r.goals.rss)})`,
  ];
}
