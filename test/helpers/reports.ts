// Writing hand-made session reports as Parquet files with exactly the schema of docs/sdk-ingest.md,
// for small cases whose figures are worked out by hand.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../../warehouse/duckdb/db.ts';
import { quotedString } from '../../warehouse/duckdb/sql-text.ts';
import { REPORT_COLUMNS } from '../../warehouse/session-reports/columns.ts';

export interface HandReport {
  reportId: string;
  sessionId: string;
  streamId: string;
  ts: string; // ISO with Z
  viewerId?: string | null;
  intervalMs?: number;
  seq?: number;
  final?: boolean;
  cohort?: 'p2p' | 'control';
  contentType?: 'live' | 'vod';
  bytesOffloaded?: number;
  bytesFallback?: number;
  bytesUploaded?: number;
  peerCount?: number | null;
  bufferHealth?: number | null;
  stallCount?: number;
  stallMs?: number;
  watchMs?: number;
  startupMs?: number | null;
  bitrateKbps?: number;
  p2pConnAttempts?: number;
  p2pConnSuccesses?: number;
  signalingErrors?: number;
  validationFailures?: number;
  busyPeerEvents?: number;
  fallbackReasons?: Record<string, number>;
  deliveryMode?: string;
  bytesByPath?: Record<string, number>;
  device?: string;
  region?: string;
  sdkVersion?: string;
  signalingVersion?: string;
}

const DEFAULTS: Omit<HandReport, 'reportId' | 'sessionId' | 'streamId' | 'ts'> = {
  viewerId: null,
  intervalMs: 30_000,
  seq: 0,
  final: false,
  cohort: 'p2p',
  contentType: 'live',
  bytesOffloaded: 0,
  bytesFallback: 0,
  bytesUploaded: 0,
  peerCount: null,
  bufferHealth: null,
  stallCount: 0,
  stallMs: 0,
  watchMs: 30_000,
  startupMs: null,
  bitrateKbps: 3000,
  p2pConnAttempts: 0,
  p2pConnSuccesses: 0,
  signalingErrors: 0,
  validationFailures: 0,
  busyPeerEvents: 0,
  fallbackReasons: {},
  deliveryMode: 'hybrid',
  bytesByPath: {},
  device: 'desktop',
  region: 'eu-west',
  sdkVersion: '3.2.1',
  signalingVersion: '1.9.2',
};

/**
 * Write `rows` to a Parquet file at `file` (folders created), every column at its contract type.
 * `omit` leaves columns out of the file, to test readers of files with missing columns.
 */
export async function writeReportsParquet(db: Db, file: string, rows: HandReport[], omit: string[] = []): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const json = `${file}.json`;
  await fs.writeFile(
    json,
    rows.map((r) => JSON.stringify({ ...DEFAULTS, ...r, ts: r.ts.replace('T', ' ').replace('Z', '') })).join('\n'),
  );
  const cols = REPORT_COLUMNS.filter((c) => !omit.includes(c.name));
  const columns = `{${cols.map((c) => `${quotedString(c.name)}: ${quotedString(c.type)}`).join(', ')}}`;
  try {
    await db.withSession((s) =>
      s.run(
        `COPY (SELECT ${cols.map((c) => `"${c.name}"`).join(', ')} FROM read_json(${quotedString(json)}, format = 'newline_delimited', columns = ${columns}))
         TO ${quotedString(file)} (FORMAT parquet)`,
      ),
    );
  } finally {
    await fs.rm(json, { force: true });
  }
}

/** The landing path of a file in a customer/date partition. */
export function landingPath(root: string, customerId: string, date: string, name: string): string {
  return path.join(root, 'raw', 'session_reports', `customer=${customerId}`, `date=${date}`, name);
}
