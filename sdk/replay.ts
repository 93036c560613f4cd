// The replay tool (`generate --post`): sends session reports held in Parquet files through a
// collector the way SDKs do: gzip'd JSON batches, several connections, retries with exponential
// backoff and jitter on 429/503/network errors, never on another 4xx. So the whole path SDK →
// collector → landing → rollup → API can be run and measured.
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { createReadStream } from 'node:fs';
import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { Db } from '../warehouse/duckdb/index.ts';
import { fileList, fillSql, quotedString } from '../warehouse/duckdb/index.ts';
import { REPORT_COLUMNS } from '../warehouse/session-reports/index.ts';
import { InternalError } from '../lib/errors.ts';

const gzipAsync = promisify(gzip);
const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The columns as the SDK sends them: `ts` as ISO 8601 UTC with microseconds. */
const JSON_SELECT = REPORT_COLUMNS.map((c) =>
  c.name === 'ts' ? `strftime(ts, '%Y-%m-%dT%H:%M:%S.%fZ') AS ts` : quoteIdent(c.name),
).join(', ');

export interface ReplayOptions {
  url: string;
  key: string;
  /** Reports per request (default 500). */
  batchSize?: number;
  /** Requests in flight (default 4). */
  concurrency?: number;
  /** Attempts per batch on 429/503/network errors (default 8). */
  attempts?: number;
  onProgress?: (sent: number) => void;
}

export interface ReplayResult {
  reports: number;
  accepted: number;
  rejected: number;
  requests: number;
  retries: number;
  ms: number;
}

export class ReplayError extends InternalError {
  override name = 'ReplayError';
  override readonly errorCode = 'replay_refused';
}

/** Write the reports of `files` as SDK JSON lines (time order) into `out`: DuckDB writes, memory stays flat. */
export async function writeReportsNdjson(db: Db, files: string[], out: string): Promise<number> {
  return db.withSession((s) =>
    s.run(
      fillSql(`COPY (SELECT {{cols}} FROM read_parquet({{files}}, union_by_name = true) ORDER BY ts, reportId) TO {{out}} (FORMAT json)`, {
        cols: JSON_SELECT,
        files: fileList(files),
        out: quotedString(out),
      }),
    ),
  );
}

/** Post every report of `files` (in time order) through the collector at `opts.url`. */
export async function replayReports(db: Db, files: string[], scratch: string, opts: ReplayOptions): Promise<ReplayResult> {
  const started = Date.now();
  const result: ReplayResult = { reports: 0, accepted: 0, rejected: 0, requests: 0, retries: 0, ms: 0 };
  if (files.length === 0) return result;
  await fs.mkdir(scratch, { recursive: true });
  const ndjson = path.join(scratch, 'reports.ndjson');
  await writeReportsNdjson(db, files, ndjson);
  const replay: Replay = { opts, result, endpoint: `${opts.url.replace(/\/+$/, '')}/v1/session-reports`, inFlight: new Set(), failure: null };
  await sendLines(replay, ndjson);
  await Promise.all(replay.inFlight);
  if (replay.failure) throw replay.failure;
  await fs.rm(ndjson, { force: true });
  result.ms = Date.now() - started;
  return result;
}

/** A replay under way: its batches in flight and the first failure, which stops it. */
interface Replay {
  opts: ReplayOptions;
  result: ReplayResult;
  endpoint: string;
  inFlight: Set<Promise<void>>;
  failure: Error | null;
}

/** Reads the reports' lines and dispatches them in batches. */
async function sendLines(replay: Replay, ndjson: string): Promise<void> {
  const batchSize = replay.opts.batchSize ?? 500;
  const lines = readline.createInterface({ input: createReadStream(ndjson, 'utf8'), crlfDelay: Infinity });
  let batch: string[] = [];
  for await (const line of lines) {
    if (line === '') continue;
    batch.push(line);
    if (batch.length >= batchSize) {
      await dispatch(replay, batch);
      batch = [];
    }
  }
  if (batch.length > 0) await dispatch(replay, batch);
}

/** Sends a batch once fewer than `concurrency` are in flight; throws the first failure met. */
async function dispatch(replay: Replay, batch: string[]): Promise<void> {
  const concurrency = replay.opts.concurrency ?? 4;
  while (replay.inFlight.size >= concurrency) await Promise.race(replay.inFlight);
  if (replay.failure) throw replay.failure;
  const p: Promise<void> = postBatch(replay, batch)
    .catch((err: Error) => {
      replay.failure ??= err;
    })
    .finally(() => replay.inFlight.delete(p));
  replay.inFlight.add(p);
  replay.result.reports += batch.length;
  replay.opts.onProgress?.(replay.result.reports);
}

/** Posts a batch, retrying on 429/503/network errors with backoff; counts what the collector accepted. */
async function postBatch(replay: Replay, lines: string[]): Promise<void> {
  const { result, opts } = replay;
  const body = await gzipAsync(`{"reports":[${lines.join(',')}]}`);
  const attempts = opts.attempts ?? 8;
  for (let attempt = 1; ; attempt++) {
    result.requests++;
    const { status, text, retryAfter } = await postOnce(replay, body);
    if (status === 202) {
      const r = JSON.parse(text) as { accepted: number; rejected: unknown[] };
      result.accepted += r.accepted;
      result.rejected += r.rejected.length;
      return;
    }
    if (!((status === 0 || status === 429 || status === 503) && attempt < attempts)) {
      throw new ReplayError(`the collector answered ${status === 0 ? 'nothing (network error)' : status} (${problemDetail(text)})`);
    }
    result.retries++;
    // Exponential backoff with full jitter, at least what Retry-After asks.
    const backoff = Math.random() * Math.min(30_000, 250 * 2 ** attempt);
    await new Promise((r) => setTimeout(r, Math.max(backoff, retryAfter * 1000)));
  }
}

/** One POST of a gzip'd batch; status 0 for a network error. */
async function postOnce(replay: Replay, body: Buffer): Promise<{ status: number; text: string; retryAfter: number }> {
  try {
    const res = await fetch(replay.endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'X-Ingest-Key': replay.opts.key },
      body,
    });
    const text = await res.text();
    return { status: res.status, text, retryAfter: Number(res.headers.get('retry-after') ?? 0) };
  } catch {
    return { status: 0, text: '', retryAfter: 0 }; // network error: retried
  }
}

/** A refusal's code and detail (problem+json), or the start of its body. */
function problemDetail(text: string): string {
  try {
    const p = JSON.parse(text) as { code?: string; detail?: string };
    return `${p.code ?? ''}: ${p.detail ?? ''}`;
  } catch {
    return text.slice(0, 300); // not problem+json
  }
}
