// A real API server on a loopback port over a real snapshot of generated data, with tokens of
// every kind the tests need (tenants, operator, expired, forged, malformed).
import fs from 'node:fs/promises';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadConfig, type AppConfig } from '../../lib/config.ts';
import { silentLogger, type Logger } from '../../lib/log.ts';
import { startApi, type RunningApi } from '../../api/server.ts';
import { issueToken, tokenSecret } from '../../api/tokens.ts';
import { addTenant, type Tenant } from '../../control/tenants.ts';
import { runPipeline } from '../../jobs/pipeline.ts';
import { readCurrent } from '../../warehouse/snapshots/snapshot-folders.ts';
import { rebuildCatalog } from '../../warehouse/publish/publication.ts';
import { openTestWarehouse, type TestWarehouse } from './warehouse.ts';
import { generateHistory } from './data.ts';
import { Independent } from './independent.ts';
import { builtOnce } from './data-cache.ts';

export const RECENT_END = new Date('2026-11-20T12:00:00Z');
export const AS_OF = new Date(RECENT_END.getTime() - 5 * 60_000);

const execFileP = promisify(execFile);

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

/** A fetch response read whole: its text, and its JSON where the text is JSON (else null). */
export async function readTestResponse(res: Response): Promise<TestResponse> {
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export interface TestApi {
  wh: TestWarehouse;
  api: RunningApi;
  url: string;
  tenants: Record<string, Tenant>;
  tokens: { acme: string; globex: string; operator: string; expired: string; forged: string; malformed: string };
  /** The independent computation over the raw files at AS_OF (made on first use: most files need none). */
  independent(): Promise<Independent>;
  get(path: string, token?: string | null, headers?: Record<string, string>): Promise<TestResponse>;
  request(method: string, path: string, init?: { token?: string | null; headers?: Record<string, string>; body?: string }): Promise<TestResponse>;
  close(): Promise<void>;
}

export function apiConfig(root: string, env: Record<string, string> = {}): AppConfig {
  return loadConfig({ overrides: { WAREHOUSE_DIR: root, PORT: 0, HOST: '127.0.0.1' }, env: { DUCKDB_THREADS: '1', DUCKDB_MEMORY_LIMIT: '1GB', ...env } });
}

/** `cp -a`: fs.cp's preserveTimestamps rounds modification times, and partition states compare them exactly. */
async function copyExact(from: string, to: string): Promise<void> {
  await fs.mkdir(to, { recursive: true });
  await execFileP('cp', ['-a', `${from}/.`, to]);
}

/**
 * The warehouse every startTestApi begins with: generated history rolled up and published at
 * AS_OF. The same seed, arguments and asOf give the same files, so it is built once a test run
 * (by whichever file asks first, the others waiting for it: builtOnce) and copied with its files'
 * modification times (which partition states record). Left out of the copy: tmp/ (the builder's
 * scratch) and the analyst catalog, which names the files by absolute path and is rebuilt in place
 * for each copy.
 */
function historyTemplate(): Promise<string> {
  return builtOnce('api-history', async (into) => {
    const wh = await openTestWarehouse();
    try {
      await generateHistory(wh, ['acme', 'globex'], 21, RECENT_END);
      await runPipeline(wh, { asOf: AS_OF });
      await copyExact(wh.root, into);
      for (const p of [wh.layout.tmp, wh.layout.catalog, `${wh.layout.catalog}.wal`, `${wh.layout.catalog}.snapshot.json`]) {
        await fs.rm(path.join(into, path.relative(wh.root, p)), { recursive: true, force: true });
      }
    } finally {
      await wh.close();
    }
  });
}

/**
 * A warehouse of its own holding the generated history (seed 21: two customers, three streams
 * each, 40 days up to RECENT_END) rolled up and published at AS_OF, its analyst catalog made.
 */
export async function historyWarehouse(): Promise<TestWarehouse> {
  const wh = await openTestWarehouse();
  await copyExact(await historyTemplate(), wh.root);
  await rebuildCatalog(wh.db, wh.layout, (await readCurrent(wh.layout))!.snapshot);
  return wh;
}

export async function startTestApi(opts: { log?: Logger; env?: Record<string, string> } = {}): Promise<TestApi> {
  const wh = await historyWarehouse();
  const tenants: Record<string, Tenant> = {};
  for (const customerId of ['acme', 'globex']) {
    tenants[customerId] = await addTenant(wh.layout, { customerId, name: customerId.toUpperCase(), cdnPricePerGb: null, savingsSharePct: 25 });
  }
  const secret = await tokenSecret(wh.layout, null);
  const now = Math.floor(Date.now() / 1000);
  const tokens = {
    acme: await issueToken(secret, { role: 'tenant', tenant: tenants['acme']! }, 3600),
    globex: await issueToken(secret, { role: 'tenant', tenant: tenants['globex']! }, 3600),
    operator: await issueToken(secret, { role: 'operator' }, 3600),
    expired: await issueToken(secret, { role: 'tenant', tenant: tenants['acme']! }, 60, now - 7200),
    forged: await issueToken(new TextEncoder().encode('another secret of 32 bytes or more!!'), { role: 'tenant', tenant: tenants['acme']! }, 3600),
    malformed: 'not-a.jwt',
  };
  const api = await startApi(apiConfig(wh.root, opts.env), opts.log ?? silentLogger);
  let ind: Promise<Independent> | undefined;

  async function request(method: string, path: string, init: { token?: string | null; headers?: Record<string, string>; body?: string } = {}): Promise<TestResponse> {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    if (init.token) headers['Authorization'] = `Bearer ${init.token}`;
    return readTestResponse(await fetch(`${api.url}${path}`, { method, headers, ...(init.body === undefined ? {} : { body: init.body }) }));
  }

  return {
    wh,
    api,
    url: api.url,
    tenants,
    tokens,
    independent: () => (ind ??= Independent.create(wh.db, wh.layout.rawReports, AS_OF)),
    get: (path, token = null, headers = {}) => request('GET', path, { token, headers }),
    request,
    async close() {
      await api.close();
      await wh.close();
    },
  };
}
